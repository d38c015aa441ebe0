// Package version is flowstate's build identity, stamped by the linker
// (scripts/build, .goreleaser.yaml), and the comparison a script uses to
// ask for a minimum build (`flowstate version --at-least X`).
package version

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Set by the linker: -ldflags "-X .../lib/version.Version=... -X .../lib/version.Commit=...".
var (
	Version = "0.1.0-dev"
	Commit  = "unknown"
)

// Line is the `flowstate version` line that hooks/run-hook, scripts/build
// --version and doctor compare builds by.
func Line() string { return fmt.Sprintf("flowstate %s (commit %s)", Version, Commit) }

// AtLeast compares dotted numeric versions; a pre-release suffix (-dev)
// counts as older than the release itself. A want that is no version is
// a usage error.
func AtLeast(have, want string) (bool, error) {
	hv, hpre := split(have)
	wv, wpre := split(want)
	if wv == nil {
		return false, fail.Usagef("--at-least %q is not a version like 1.2.0", want)
	}
	for i := 0; i < max(len(hv), len(wv)); i++ {
		var h, w int
		if i < len(hv) {
			h = hv[i]
		}
		if i < len(wv) {
			w = wv[i]
		}
		if h != w {
			return h > w, nil
		}
	}
	return !hpre || wpre, nil
}

func split(v string) (nums []int, pre bool) {
	v = strings.TrimPrefix(v, "v")
	v, suffix, _ := strings.Cut(v, "-")
	for _, part := range strings.Split(v, ".") {
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil, false
		}
		nums = append(nums, n)
	}
	return nums, suffix != ""
}
