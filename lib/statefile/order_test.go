package statefile

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeysOrder: Keys and the State's WriteExports give the full sort
// whatever order keys were appended or Set in, and whether or not Values
// was changed behind Set's back.
func TestKeysOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		values := map[string]string{}
		for i := range r.IntN(40) {
			values[fmt.Sprintf("K%03d", r.IntN(60))] = fmt.Sprint(i)
		}
		data := Compact(values)
		// Appends after the compaction: new keys and overwrites, any order.
		for range r.IntN(20) {
			k := fmt.Sprintf("K%03d", r.IntN(80))
			v := fmt.Sprint("v", r.IntN(9), "\n$x") // quoted on export
			values[k] = v
			data = append(append(data, EncodeLine(k, v)...), '\n')
		}
		st := Parse(data)
		for range r.IntN(12) {
			k := fmt.Sprintf("D%03d", r.IntN(90))
			st.Set(k, "d")
			values[k] = "d"
		}
		if trial%5 == 0 { // changed directly: Keys must notice and sort all
			st.Values["ZZZ_DIRECT"], values["ZZZ_DIRECT"] = "z", "z"
			st.Values["AAA_DIRECT"], values["AAA_DIRECT"] = "a", "a"
		}
		want := sortedKeys(values)
		if got := st.Keys(); !slices.Equal(got, want) {
			t.Fatalf("trial %d: Keys() = %q, want %q", trial, got, want)
		}
		if got, want := st.exportLines(), exportLines(values); got != want {
			t.Fatalf("trial %d: State.exportLines() = %q, want %q", trial, got, want)
		}
	}
	var zero State
	zero.Set("B", "1")
	zero.Set("A", "2")
	if got := zero.Keys(); !slices.Equal(got, []string{"A", "B"}) {
		t.Errorf("zero State: %q", got)
	}
}
