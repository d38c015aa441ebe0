package sm

import (
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// A spend limit. A workflow may carry its own (sm-init --budget, a
// command's --budget AMOUNT, approve --budget), else its project's
// (usage.SettingsFile's "budget"). Once what the hooks recorded it spent
// reaches the limit, the next step holds it as a gate does (status
// awaiting_approval, hold kind budget): nothing runs on until a person
// allows more (ApproveBudget) or cancels it.

// Limits are what a workflow's spend is held against: the project's
// limit (nil: none) and its prices (for a limit in money).
type Limits struct {
	Project *usage.Budget
	Prices  *usage.Prices
}

// LimitsOf reads a project's limits from its settings file's contents
// (usage.SettingsFile). A file that cannot be used is exit 2: a limit is
// never silently dropped.
func LimitsOf(settings []byte) (Limits, error) {
	var l Limits
	var err error
	if l.Prices, err = usage.ParseSettings(settings); err == nil {
		l.Project, err = usage.ParseBudgetSetting(settings)
	}
	if err == nil && l.Project != nil {
		err = l.Project.Check(l.Prices)
	}
	if err != nil {
		return Limits{}, fail.Usagef("%v", err)
	}
	return l, nil
}

// budgetOf is the limit that holds for the workflow whose checkpoint is
// doc: its own, else the project's; zero for none.
func (l Limits) budgetOf(doc []byte) usage.Budget {
	var own usage.Budget
	if raw := gjson.GetBytes(doc, checkpoint.PathBudget); raw.IsObject() && json.Unmarshal([]byte(raw.Raw), &own) == nil && !own.IsZero() {
		return own
	}
	if l.Project != nil {
		return *l.Project
	}
	return usage.Budget{}
}

// Spent is what workflow w recorded it spent: tokens, and their cost at
// prices (what the models without a price spent left out).
func Spent(w *store.Workflow, doc []byte, prices *usage.Prices) (tokens int64, cost float64, err error) {
	events, err := w.ReadEvents()
	if err != nil {
		return 0, 0, err
	}
	run := timeline.Build(timeline.Input{ID: w.ID, Checkpoint: doc, Events: events})
	_, cost, _ = run.Cost(prices)
	return run.Total().Total(), cost, nil
}

// CheckBudget holds an in-progress workflow whose recorded spend reached
// its limit, and returns the exit-6 error that says so; nil while it is
// under it, has none, or is not in progress (held, finished).
func CheckBudget(w *store.Workflow, l Limits) error {
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return err
	}
	b := l.budgetOf(doc)
	if b.IsZero() || checkpoint.ViewOf(doc).Status != checkpoint.InProgress {
		return nil
	}
	if err := b.Check(l.Prices); err != nil {
		return fail.Usagef("workflow %s: %v", w.ID, err)
	}
	tokens, cost, err := Spent(w, doc, l.Prices)
	if err != nil || !b.Reached(tokens, cost) {
		return err
	}
	var held error // returned once the hold is written: an error in Update would write nothing
	err = w.Update(func(tx *store.Tx) error {
		v := checkpoint.ViewOf(tx.Checkpoint)
		if v.Status != checkpoint.InProgress {
			return nil // held or finished meanwhile
		}
		spent, limit := b.Of(tokens, cost)
		msg := fmt.Sprintf("spent %s of %s", spent, limit)
		h := checkpoint.Hold{Kind: checkpoint.HoldBudget, Since: checkpoint.Timestamp(tx.Now), From: v.CurrentState, Message: msg}
		ed := editor{doc: tx.Checkpoint}
		ed.set(checkpoint.PathStatus, checkpoint.AwaitingApproval)
		ed.set(checkpoint.PathHold, h)
		ed.touch(tx.Now)
		tx.Checkpoint = ed.doc
		tx.Event("budget", map[string]any{"state": v.CurrentState, "spent": spent, "limit": limit})
		held = refuseHeld(w, checkpoint.ViewOf(ed.doc))
		return ed.err
	})
	if err != nil {
		return err
	}
	return held
}

// ApproveBudget lets workflow w spend more on top of what it spent: its
// limit becomes what it spent plus more, recorded with who allowed it. A
// workflow held at its limit goes on (in_progress); one at work gets the
// new limit ahead of reaching the old. Run again with nothing spent
// since, the limit is the same. It returns the new limit.
func ApproveBudget(w *store.Workflow, a Actor, more usage.Budget, l Limits, note string) (usage.Budget, error) {
	if err := more.Check(l.Prices); err != nil {
		return usage.Budget{}, fail.Usagef("workflow %s: %v", w.ID, err)
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return usage.Budget{}, err
	}
	tokens, cost, err := Spent(w, doc, l.Prices)
	if err != nil {
		return usage.Budget{}, err
	}
	limit := more.After(tokens, cost)
	err = w.Update(func(tx *store.Tx) error {
		v := checkpoint.ViewOf(tx.Checkpoint)
		held := v.Status == checkpoint.AwaitingApproval && v.Hold != nil && v.Hold.Kind == checkpoint.HoldBudget
		switch {
		case held, v.Status == checkpoint.InProgress:
		case v.Hold != nil && v.Hold.Kind == checkpoint.HoldApproval:
			return fail.Waitingf("workflow %s %s: that is a gate, not its spend limit; approve it with `flowstate approve` (no --budget)", w.ID, v.Hold.Sentence())
		default:
			return notWaiting(w, v, "allow more spending for")
		}
		ed := editor{doc: tx.Checkpoint}
		if held {
			ed.set(checkpoint.PathStatus, checkpoint.InProgress)
			ed.delete(checkpoint.PathHold)
		}
		ed.set(checkpoint.PathBudget, limit)
		ed.touch(tx.Now)
		tx.Checkpoint = ed.doc
		spent, now := limit.Of(tokens, cost)
		ev := a.fields(map[string]any{"state": v.CurrentState, "kind": checkpoint.HoldBudget, "more": more.String(), "spent": spent, "limit": now})
		if note != "" {
			ev["note"] = note
		}
		tx.Event("approve", ev)
		return ed.err
	})
	return limit, err
}
