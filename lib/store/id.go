package store

import (
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

const maxIDLen = 128

// ValidID accepts workflow and session ids that are safe as one path
// component: letters, digits, '.', '_' and '-', not starting with '.' or
// '-', at most 128 bytes. Its messages start with the value: callers say
// what it is ("workflow id: ...").
func ValidID(id string) error {
	if id == "" {
		return fail.Invalidf("empty")
	}
	if len(id) > maxIDLen {
		return fail.Invalidf("%d bytes long, too long (at most %d)", len(id), maxIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' ||
			i > 0 && (c == '.' || c == '-')
		if !ok {
			return fail.Invalidf("%q: only letters, digits, '_', and (not first) '.' or '-' are allowed", printable(id))
		}
	}
	if strings.Contains(id, "..") {
		return fail.Invalidf("%q must not contain '..'", id)
	}
	return nil
}

// printable keeps an error message on one line whatever the id holds.
func printable(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

// NewID makes a readable, unique id: command, UTC time, random suffix.
// The random part makes two ids of one second different, unlike the
// original's one-second checkpoint names. math/rand/v2's generator is
// seeded from the OS at start-up and an id is no secret: crypto/rand
// would add its package initialisation to every flowstate process.
func NewID(command string, now time.Time) string {
	var b [3]byte
	n := rand.Uint32()
	b[0], b[1], b[2] = byte(n), byte(n>>8), byte(n>>16)
	prefix := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '-'
	}, command)
	prefix = strings.Trim(prefix, "-")
	if prefix == "" {
		prefix = "wf"
	}
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	return prefix + "-" + now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
