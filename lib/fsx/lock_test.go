package fsx

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// TestLockSurvivesItsFile: while one writer holds a lock, removing its
// file or replacing it (a rename over it, as a sync tool does) does not
// let a second writer in: the second waits and gives up with exit 5.
// Once the first releases it, the second gets it, and the lock file is
// there again. flock(2) locks of two open files conflict within one
// process too, so this is what two processes see.
func TestLockSurvivesItsFile(t *testing.T) {
	for name, disturb := range map[string]func(t *testing.T, path string){
		"removed": func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		},
		"replaced": func(t *testing.T, path string) {
			other := path + ".new"
			if err := os.WriteFile(other, nil, FilePerm); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "lock")
			held, err := Acquire(path, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			disturb(t, path)
			second, err := Acquire(path, 200*time.Millisecond)
			if fail.Code(err) != fail.Locked {
				second.Release()
				t.Fatalf("a second writer got in after the lock file was %s: %v", name, err)
			}
			held.Release()
			second, err = Acquire(path, time.Second)
			if err != nil {
				t.Fatalf("after the release: %v", err)
			}
			defer second.Release()
			if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
				t.Errorf("the lock file after a new Acquire: %v, %v", st, err)
			}
		})
	}
}

// TestLockFileStillHonoured: a flock on the lock file alone (an older
// flowstate, flock(1) in a script) still keeps a writer out.
func TestLockFileStillHonoured(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	other := flock.New(path)
	if err := other.Lock(); err != nil {
		t.Fatal(err)
	}
	defer other.Unlock()
	if l, err := Acquire(path, 100*time.Millisecond); fail.Code(err) != fail.Locked {
		l.Release()
		t.Fatalf("Acquire while another holds the file: %v", err)
	}
}

// TestStillAt: a lock whose file was removed or replaced after it was
// taken is no longer at its path; Acquire takes it again then.
func TestStillAt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY|os.O_CREATE))
	if err := fl.Lock(); err != nil {
		t.Fatal(err)
	}
	defer fl.Unlock()
	if same, err := stillAt(fl); !same || err != nil {
		t.Fatalf("just locked: %v, %v", same, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if same, err := stillAt(fl); same || err != nil {
		t.Errorf("removed: %v, %v; want moved", same, err)
	}
	if err := os.WriteFile(path, nil, FilePerm); err != nil {
		t.Fatal(err)
	}
	if same, err := stillAt(fl); same || err != nil {
		t.Errorf("replaced: %v, %v; want moved", same, err)
	}
}
