package store

import (
	"errors"
	"fmt"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Replace makes data the workflow's whole checkpoint (checkpoint-save):
// an older schema is migrated first, and the document must belong to
// this workflow. source names the document in messages ("the document on
// stdin"). With ifUnchanged, a document loaded before the checkpoint's
// last write is refused (exit 3) instead of undoing that write;
// metadata.revision tells the two apart. A refused document leaves the
// stored checkpoint as it was, and the message says so.
func (w *Workflow) Replace(data []byte, source string, ifUnchanged bool) error {
	unchanged := "; nothing was written, the checkpoint of workflow " + w.ID + " is unchanged"
	doc, from, err := w.migrate(data)
	switch {
	case errors.Is(err, checkpoint.ErrNotJSON):
		return fail.Invalidf("%s is not valid JSON%s", source, unchanged)
	case err != nil:
		return fmt.Errorf("%s: %w%s", source, err, unchanged)
	}
	v := checkpoint.ViewOf(doc)
	if v.ID != w.ID {
		return fail.Invalidf("%s has workflow_id %q but the workflow is %q%s", source, v.ID, w.ID, unchanged)
	}
	loaded := v.Revision
	return w.Update(func(tx *Tx) error {
		if ifUnchanged && loaded != tx.Revision {
			return fail.Refusedf("the checkpoint of workflow %s was written since %s was loaded (revision %d, now %d); load it again, reapply the change and save; nothing was written", w.ID, source, loaded, tx.Revision)
		}
		tx.Checkpoint = doc
		tx.Event("checkpoint-save", map[string]any{"schema_from": from})
		return nil
	})
}
