package checkpoint

import (
	"testing"

	"github.com/tidwall/sjson"
)

// mustSetRaw edits a fixture behind Set's back (no validation, no touch),
// to build invalid documents. Paths in tests are plain.
func mustSetRaw(t testing.TB, doc []byte, path, raw string) []byte {
	t.Helper()
	out, err := sjson.SetRawBytes(doc, path, []byte(raw))
	if err != nil {
		t.Fatalf("sjson.SetRaw(%s): %v", path, err)
	}
	return out
}
