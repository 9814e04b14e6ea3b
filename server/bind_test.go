package server

import "testing"

func TestBindAddr(t *testing.T) {
	for _, tc := range []struct {
		entry, network, host string
		optional             bool
	}{
		{"127.0.0.1", "tcp4", "127.0.0.1", false},
		{"-127.0.0.1", "tcp4", "127.0.0.1", true},
		{"*", "tcp4", "0.0.0.0", false},
		{"-::*", "tcp6", "::", true},
		{"::1", "tcp6", "::1", false},
		{"-::1", "tcp6", "::1", true},
		{"localhost", "tcp", "localhost", false},
	} {
		network, host, optional := bindAddr(tc.entry)
		if network != tc.network || host != tc.host || optional != tc.optional {
			t.Errorf("bindAddr(%q) = %q %q %v, want %q %q %v", tc.entry, network, host, optional, tc.network, tc.host, tc.optional)
		}
	}
}
