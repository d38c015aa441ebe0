package fail

import (
	"errors"
	"fmt"
	"testing"
)

func TestCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, OK},
		{"plain", errors.New("disk on fire"), Unexpected},
		{"usage", Usagef("no workflow"), Usage},
		{"refused", Refusedf("x"), Refused},
		{"invalid", Invalidf("x"), Invalid},
		{"locked", Lockedf("x"), Locked},
		{"waiting", Waitingf("x"), Waiting},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", Invalidf("bad key"))), Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Code(tt.err); got != tt.want {
				t.Errorf("Code(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestTableIsOrdered(t *testing.T) {
	for i, row := range Table {
		if row.Code != i {
			t.Errorf("Table[%d].Code = %d", i, row.Code)
		}
	}
}
