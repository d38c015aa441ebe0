package store

import (
	"fmt"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
)

// The edits of one value of the checkpoint (checkpoint-set), each one
// locked write. The document is validated after the edit; an invalid
// result is refused and nothing is written.

// SetCheckpoint stores the JSON value at path (checkpoint.Set). The value
// is checked before the lock is taken, so a bad one never makes other
// writers wait.
func (w *Workflow) SetCheckpoint(path string, value []byte) error {
	if err := checkpoint.CheckEdit(path, value, false); err != nil {
		return err
	}
	return w.edit(func(doc []byte, tx *Tx) ([]byte, error) {
		return checkpoint.Set(doc, path, value, tx.Now)
	})
}

// AppendCheckpoint appends the JSON value to the array at path
// (checkpoint.Append), checked before the lock as SetCheckpoint's is.
func (w *Workflow) AppendCheckpoint(path string, value []byte) error {
	if err := checkpoint.CheckEdit(path, value, true); err != nil {
		return err
	}
	return w.edit(func(doc []byte, tx *Tx) ([]byte, error) {
		return checkpoint.Append(doc, path, value, tx.Now)
	})
}

// IncrementCheckpoint adds delta to the integer at path
// (checkpoint.Increment) and returns the new number.
func (w *Workflow) IncrementCheckpoint(path string, delta int64) (int64, error) {
	var n int64
	err := w.edit(func(doc []byte, tx *Tx) (out []byte, err error) {
		out, n, err = checkpoint.Increment(doc, path, delta, tx.Now)
		return out, err
	})
	return n, err
}

// edit replaces the checkpoint with what fn makes of it, under the lock;
// fn's error names the workflow.
func (w *Workflow) edit(fn func(doc []byte, tx *Tx) ([]byte, error)) error {
	return w.Update(func(tx *Tx) error {
		doc, err := fn(tx.Checkpoint, tx)
		if err != nil {
			return fmt.Errorf("workflow %s: %w", w.ID, err)
		}
		tx.Checkpoint = doc
		return nil
	})
}
