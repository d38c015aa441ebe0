package version

import "testing"

func TestAtLeast(t *testing.T) {
	tests := []struct {
		have, want string
		ok         bool
	}{
		{"1.2.0", "1.2.0", true}, {"1.2.0", "1.1.9", true}, {"1.2.0", "1.10", false},
		{"v2.0.0", "1.9.9", true}, {"0.1.0-dev", "0.1.0", false}, {"0.1.0-dev", "0.0.9", true},
		{"0.1.0", "0.1.0-rc1", true}, {"1.2", "1.2.0", true},
	}
	for _, tt := range tests {
		got, err := AtLeast(tt.have, tt.want)
		if err != nil || got != tt.ok {
			t.Errorf("AtLeast(%s, %s) = %v, %v", tt.have, tt.want, got, err)
		}
	}
	if _, err := AtLeast("1.0.0", "latest"); err == nil {
		t.Error("non-version accepted")
	}
}
