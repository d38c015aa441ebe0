// Package report owns `flowstate report`: one self-contained HTML page of
// a workflow's run, for people to look at afterwards. It holds a timeline
// of the states and of every agent as bars on one time axis (the agents
// at work at once side by side, each wave of a state bracketed), the
// waits for a person, failures, retries, rewinds and partial failures
// marked, the tokens (and money, with a price table) on every bar, and
// links to the agents' artifacts. The page needs nothing from a network:
// no scripts, no fonts, no images, only inline CSS, and it lays itself
// out from 3 agents to hundreds, on a narrow window or a wide one.
//
// It is pure: Render writes the page for a timeline the caller built.
package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flowstate-dev/flowstate/lib/status"
	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// Input is what a page shows.
type Input struct {
	Run       timeline.Timeline
	Scope     string
	Prices    *usage.Prices
	Generated time.Time
	Version   string
	// Project is the project's directory: artifacts are shown relative to
	// it, and linked from the page.
	Project string
	// Page is the directory the page is written to (for a page on
	// stdout, the working directory): links are relative to it, or file:
	// URLs where the page is outside the project. "": no links.
	Page string
	// Notes are what a person should know first and what to do next
	// (status.Notes).
	Notes []status.Note
	// Exists tells whether an artifact (its absolute path) is there to
	// link to: a worker that failed may have written nothing. nil: all are.
	Exists func(path string) bool
}

// Render writes the page.
func Render(w io.Writer, in Input) error {
	return page().Execute(w, build(in))
}

// view is what the template reads.
type view struct {
	Title, ID, Command, Description, Scope, Status, Version string
	Generated, Started, Ended                               string
	Took, Tokens, Money                                     string
	Active                                                  bool
	Ticks                                                   []tick
	States                                                  []bar
	Waits                                                   []bar
	Marks                                                   []mark
	Lanes                                                   [][]bar
	Waves                                                   []bar
	Summary                                                 []summaryRow
	Agents                                                  []agentRow
	Main                                                    []mainRow
	Legend                                                  []legend
	Height                                                  int // px of the agent lanes
	Counts                                                  string
	EndState                                                string // the state the run ended in
	Notes                                                   []status.Note
	ArtifactDir                                             string // the directory (project-relative) the artifacts in the table are relative to
}

type tick struct {
	Left  float64
	Label string
	Odd   bool // every other mark, left out on a narrow window
	Last  bool
}

// bar is one span on the axis; Left and Width in percent of it.
type bar struct {
	Left, Width float64
	Class       string
	Label       string
	Title       string
	Color       string
	Wave        int
	Agent       int  // index in agentRow, for the anchor
	Point       bool // a stay that took no time (the state a run ended in): drawn as a point
}

type mark struct {
	Left  float64
	Kind  string
	Title string
	Glyph string
}

type summaryRow struct {
	State, Took, Tokens, Money, Agents, Notes string
}

type agentRow struct {
	N                                                           int
	Type, Worker, State, Status, Start, Took, Model, Error      string
	Branch                                                      string // an isolated agent's branch and what became of it
	Input, Output, CacheRead, CacheWrite, Total, Money, Attempt string
	Requests, ToolUses                                          string
	Wave                                                        int
	Link                                                        template.URL // built by url.URL, so safe in an href
	Artifact                                                    []string     // its path (relative to the view's ArtifactDir), by its parts, wrapped only between them
	Path                                                        string       // its path relative to the project
	Class                                                       string
	Rewound                                                     bool
}

type mainRow struct {
	State, Model, Total, Input, Output, CacheRead, CacheWrite, Requests, Money string
}

type legend struct{ Class, Label string }

func build(in Input) view {
	t := in.Run
	ax := newScale(t.Start, t.End)
	v := view{
		ID: t.ID, Command: t.Command, Description: t.Description, Scope: in.Scope, Status: t.Status, Version: in.Version,
		Generated: stamp(in.Generated), Started: stamp(t.Start), Took: status.Duration(t.End.Sub(t.Start)), Active: t.Active,
		Tokens: usage.Tokens(t.Total().Total()), Notes: in.Notes,
	}
	v.Title = "flowstate · " + t.ID
	if !t.Active {
		v.Ended = stamp(t.End)
		if n := len(t.States); n > 0 {
			v.EndState = t.States[n-1].Name
		}
	}
	perState, total, _ := t.Cost(in.Prices)
	if in.Prices != nil {
		v.Money = in.Prices.Money(total)
		if models, _ := t.Unpriced(in.Prices); len(models) > 0 {
			v.Money += " (" + status.UnpricedText(models, t.Total().Total()) + ")"
		}
	}
	v.Ticks = ticks(ax.span)
	for i := range v.Ticks {
		v.Ticks[i].Left = clamp(v.Ticks[i].Left)
		v.Ticks[i].Odd, v.Ticks[i].Last = i%2 == 1, i == len(v.Ticks)-1
	}
	for i, s := range t.States {
		v.States = append(v.States, stateBar(s, i, ax))
	}
	for _, w := range t.Waits {
		v.Waits = append(v.Waits, waitBar(w, t.End, ax))
	}
	for _, m := range t.Marks {
		v.Marks = append(v.Marks, mark{Left: ax.pos(m.At), Kind: m.Kind, Glyph: glyphs[m.Kind], Title: fmt.Sprintf("%s %s in %s: %s", clock(m.At), m.Kind, m.State, m.Text)})
	}
	v.addAgents(in, ax)
	v.Height = max(1, t.Lanes) * 22
	v.Summary = summaryRows(in, perState)
	v.Main = mainRows(in)
	v.Counts = fmt.Sprintf("%s, at most %d at once; %s", status.Count(len(t.Agents), "agent"), t.Lanes, status.Count(len(t.States), "state"))
	v.Legend = []legend{{"done", "done"}, {"running", "running"}, {"failed", "failed"}, {"waiting", "waiting for a person"}, {"retry", "retried (a worker run again)"},
		{"stuck", "stuck"}, {"stopped", "stopped, not checked"}, {"lost", "never seen stopping"}, {"rewound", "rewound (work taken back, still spent)"}}
	return v
}

// scale places the times of a run on the axis, in percent of it.
type scale struct {
	start time.Time
	span  time.Duration
}

func newScale(start, end time.Time) scale {
	span := end.Sub(start)
	if span <= 0 {
		span = time.Second
	}
	return scale{start, span}
}

func (s scale) pos(at time.Time) float64 {
	return clamp(100 * float64(at.Sub(s.start)) / float64(s.span))
}

// width is at least a sliver, so that an instant still shows.
func (s scale) width(from, to time.Time) float64 {
	return math.Max(0.25, s.pos(to)-s.pos(from))
}

// stateBar is a stay in a state (the n-th), its title saying what befell
// it. Its colour says what it is (current, failed, rewound), never which
// state: neighbours alternate two neutral shades. A stay that took no
// time, the terminal state a run ended in, is a point.
func stateBar(s timeline.State, n int, ax scale) bar {
	cls := "state"
	if n%2 == 1 {
		cls += " alt"
	}
	var notes []string
	if s.Rewound {
		cls += " rewound"
		notes = append(notes, "rewound: its work was taken back")
	}
	if s.Failed {
		cls += " failed"
		notes = append(notes, "an error was recorded")
	}
	if s.Partial {
		cls += " partial"
		notes = append(notes, "partial failure: some workers failed, the workflow went on")
	}
	if s.Current {
		cls += " current"
	}
	title := fmt.Sprintf("%s: %s (%s → %s)", s.Name, status.Duration(s.End.Sub(s.Start)), clock(s.Start), clock(s.End))
	if !s.End.After(s.Start) && !s.Current {
		title = fmt.Sprintf("%s: entered at %s", s.Name, clock(s.Start))
	}
	if len(notes) > 0 {
		title += "; " + strings.Join(notes, "; ")
	}
	b := bar{Left: ax.pos(s.Start), Width: ax.width(s.Start, s.End), Class: cls, Label: s.Name, Title: title}
	if !s.End.After(s.Start) && !s.Current {
		b.Point, b.Class, b.Width = true, cls+" point", 0
	}
	return b
}

// waitBar is a wait for a person, up to now (runEnd) while it lasts.
func waitBar(w timeline.Wait, runEnd time.Time, ax scale) bar {
	end := w.End
	if end.IsZero() {
		end = runEnd
	}
	what := "waiting for approval to enter " + w.State
	switch w.Kind {
	case "pause":
		what = "paused in " + w.State
	case "budget":
		what = "held at its spend limit in " + w.State
	}
	if w.Message != "" {
		what += ": " + w.Message
	}
	title := fmt.Sprintf("%s, %s", what, status.Duration(end.Sub(w.Start)))
	if w.Outcome != "" {
		title += "; then " + w.Outcome
		if w.By != "" {
			title += " by " + w.By
		}
	}
	return bar{Left: ax.pos(w.Start), Width: ax.width(w.Start, end), Class: "wait " + w.Kind, Label: waitLabel(w), Title: title}
}

// addAgents puts each agent's bar on its lane and its row in the table,
// in agentOrder, and brackets each wave of a state (per rewind) around
// its agents' bars.
func (v *view) addAgents(in Input, ax scale) {
	t := in.Run
	v.Lanes = make([][]bar, t.Lanes)
	waves := map[[2]any]int{} // state and epoch, wave -> index in v.Waves
	for n, i := range agentOrder(t.Agents) {
		a := t.Agents[i]
		end := a.End
		if end.IsZero() {
			end = t.End
		}
		b := agentBar(a, end, ax)
		b.Agent = n + 1
		v.Lanes[a.Lane] = append(v.Lanes[a.Lane], b)
		k := [2]any{a.State + "\x00" + fmt.Sprint(a.Epoch), a.Wave}
		if w, ok := waves[k]; ok {
			v.Waves[w] = widen(v.Waves[w], b)
		} else {
			waves[k] = len(v.Waves)
			v.Waves = append(v.Waves, bar{Left: b.Left, Width: b.Width, Label: fmt.Sprintf("%s wave %d", a.State, a.Wave), Agent: 1, Wave: a.Wave})
		}
		v.Agents = append(v.Agents, newAgentRow(in, n+1, a, end))
	}
	v.agentMoney(in)
	v.artifactDir()
	for i := range v.Waves {
		v.Waves[i].Title = fmt.Sprintf("%s: %s", v.Waves[i].Label, status.Count(v.Waves[i].Agent, "agent"))
	}
	sort.SliceStable(v.Waves, func(i, j int) bool { return v.Waves[i].Left < v.Waves[j].Left })
}

// agentBar is an agent's run, up to end; its title says all there is to
// know about it, its label only its worker (the colour says its status).
func agentBar(a timeline.Agent, end time.Time, ax scale) bar {
	cls := "agent " + a.Status
	if a.Rewound {
		cls += " rewound"
	}
	name := a.Type
	if a.Worker != "" {
		name += " " + a.Worker
	}
	label := a.Worker
	if label == "" {
		label = a.Type
	}
	if !a.Usage.Zero() {
		label += " · " + usage.Tokens(a.Usage.Total())
	}
	title := fmt.Sprintf("%s\n%s in %s, wave %d: %s, %s (%s → %s)", name, a.Status, a.State, a.Wave, status.Duration(end.Sub(a.Start)),
		tokensText(a.Usage), clock(a.Start), clock(end))
	if a.Model != "" {
		title += "\nmodel " + a.Model
	}
	if a.Attempt > 1 {
		title += fmt.Sprintf("\nattempt %d", a.Attempt)
		cls += " retry"
	}
	if a.Rewound {
		title += "\nrewound: its state's work was taken back"
	}
	if a.Error != "" {
		title += "\n" + a.Error
	}
	return bar{Left: ax.pos(a.Start), Width: ax.width(a.Start, end), Class: cls, Label: label, Title: title, Wave: a.Wave}
}

// widen stretches a wave's bracket over one more agent's bar and counts
// it.
func widen(wave, b bar) bar {
	right := math.Max(wave.Left+wave.Width, b.Left+b.Width)
	wave.Left = math.Min(wave.Left, b.Left)
	wave.Width = right - wave.Left
	wave.Agent++
	return wave
}

// summaryRows are the table of what each state took and spent, in the
// order the states were first entered.
func summaryRows(in Input, perState map[string]float64) []summaryRow {
	t := in.Run
	agentsIn := map[string]int{}
	for _, a := range t.Agents {
		agentsIn[a.State]++
	}
	_, unpriced := t.Unpriced(in.Prices)
	var column []float64
	for _, s := range t.Spent() {
		column = append(column, perState[s.State])
	}
	places := usage.Decimals(column...)
	var rows []summaryRow
	for _, s := range t.Spent() {
		took, notes := stays(t.States, s.State)
		row := summaryRow{State: s.State, Took: status.Duration(took), Tokens: usage.Tokens(s.Usage.Total()), Agents: fmt.Sprint(agentsIn[s.State]),
			Notes: strings.Join(notes, ", ")}
		switch {
		case in.Prices == nil:
		case unpriced[s.State] && perState[s.State] == 0:
			row.Money = "no price"
		default:
			row.Money = in.Prices.MoneyIn(perState[s.State], places)
			if unpriced[s.State] {
				row.Money += " + unpriced"
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// stays sums the time of every stay in state and notes, once each, what
// befell any of them.
func stays(states []timeline.State, state string) (time.Duration, []string) {
	var took time.Duration
	var notes []string
	note := func(on bool, n string) {
		if on && !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	for _, st := range states {
		if st.Name == state {
			took += st.End.Sub(st.Start)
			note(st.Rewound, "rewound")
			note(st.Partial, "partial failure")
			note(st.Failed, "error")
		}
	}
	return took, notes
}

// mainRows are the main thread's tokens per state and model.
func mainRows(in Input) []mainRow {
	var column []float64
	for _, m := range in.Run.Main {
		if c, ok := in.Prices.Cost(m.Model, m.Usage); ok {
			column = append(column, c)
		}
	}
	places := usage.Decimals(column...)
	var rows []mainRow
	for _, m := range in.Run.Main {
		row := mainRow{State: m.State, Model: m.Model, Total: usage.Tokens(m.Usage.Total()), Input: num(m.Usage.Input), Output: num(m.Usage.Output),
			CacheRead: num(m.Usage.CacheRead), CacheWrite: num(m.Usage.CacheWrite), Requests: fmt.Sprint(m.Requests)}
		if c, ok := in.Prices.Cost(m.Model, m.Usage); ok {
			row.Money = in.Prices.MoneyIn(c, places)
		} else if in.Prices != nil {
			row.Money = "no price"
		}
		rows = append(rows, row)
	}
	return rows
}

var glyphs = map[string]string{"error": "✗", "retry": "↻", "rewind": "↺", "cancel": "⊘"}

func waitLabel(w timeline.Wait) string {
	switch w.Kind {
	case "pause":
		return "paused"
	case "budget":
		return "spend limit"
	}
	return "approval"
}

// artifactDir shows the artifacts relative to the directory they all
// share (a workflow's spec directory), named above the table, so that
// a row holds its file's name, not a path across the page.
func (v *view) artifactDir() {
	var paths []string
	for _, r := range v.Agents {
		if r.Path != "" {
			paths = append(paths, r.Path)
		}
	}
	dir := status.CommonDir(paths)
	if dir == "" {
		return
	}
	v.ArtifactDir = dir
	for i := range v.Agents {
		if p := v.Agents[i].Path; p != "" {
			v.Agents[i].Artifact = strings.SplitAfter(strings.TrimPrefix(p, dir), "/")
		}
	}
}

// agentMoney writes the agents' cost in one precision, the column's.
func (v *view) agentMoney(in Input) {
	var column []float64
	costs := make([]*float64, len(v.Agents))
	for i, a := range agentOrder(in.Run.Agents) {
		if c, ok := in.Prices.Cost(in.Run.Agents[a].Model, in.Run.Agents[a].Usage); ok {
			costs[i] = &c
			column = append(column, c)
		}
	}
	places := usage.Decimals(column...)
	for i := range v.Agents {
		switch {
		case costs[i] != nil:
			v.Agents[i].Money = in.Prices.MoneyIn(*costs[i], places)
		case in.Prices != nil && v.Agents[i].Model != "":
			v.Agents[i].Money = "no price"
		}
	}
}

func newAgentRow(in Input, n int, a timeline.Agent, end time.Time) agentRow {
	r := agentRow{N: n, Type: a.Type, Worker: a.Worker, State: a.State, Status: a.Status, Start: "+" + status.Duration(a.Start.Sub(in.Run.Start)),
		Took: status.Duration(end.Sub(a.Start)), Model: a.Model, Error: relText(in.Project, a.Error), Wave: a.Wave, Class: a.Status, Rewound: a.Rewound,
		Input: num(a.Usage.Input), Output: num(a.Usage.Output), CacheRead: num(a.Usage.CacheRead), CacheWrite: num(a.Usage.CacheWrite),
		Total: usage.Tokens(a.Usage.Total()), Requests: fmt.Sprint(a.Requests), ToolUses: fmt.Sprint(a.ToolUses)}
	if !a.Measured && a.Usage.Zero() {
		r.Total, r.Input, r.Output, r.CacheRead, r.CacheWrite, r.Requests, r.ToolUses = "–", "", "", "", "", "", ""
	}
	if a.Attempt > 1 {
		r.Attempt = fmt.Sprint(a.Attempt)
	}
	r.Branch = relText(in.Project, strings.TrimPrefix(status.Branch(a), "; "))
	if a.Artifact != "" {
		r.Path = status.Rel(in.Project, a.Artifact)
		r.Artifact = strings.SplitAfter(r.Path, "/")
		if in.Page != "" && in.Project != "" && (in.Exists == nil || in.Exists(abs(in.Project, a.Artifact))) {
			r.Link = Link(in.Project, in.Page, a.Artifact)
		}
	}
	return r
}

// Link is a worker's output path (absolute, or relative to project) as
// a link from a page in dir: relative when both are in the project, so
// that the page and the specs move together; a file: URL otherwise.
// Either is built by url.URL, escaped, and so safe in an href.
func Link(project, dir, path string) template.URL {
	full := abs(project, path)
	within := func(p string) bool { return p == project || strings.HasPrefix(p, project+string(filepath.Separator)) }
	if rel, err := filepath.Rel(dir, full); err == nil && within(full) && within(dir) {
		return template.URL((&url.URL{Path: filepath.ToSlash(rel)}).String())
	}
	return template.URL((&url.URL{Scheme: "file", Path: filepath.ToSlash(full)}).String())
}

// abs is path, absolute or relative to project, made absolute.
func abs(project, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(project, path)
}

// relText is text with the project's paths shown relative to it.
func relText(project, text string) string {
	if project == "" {
		return text
	}
	return strings.ReplaceAll(text, project+string(filepath.Separator), "")
}

// agentOrder lists agents by start, then lane: the order of the table and
// of the anchors the bars link to.
func agentOrder(agents []timeline.Agent) []int {
	order := make([]int, len(agents))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := agents[order[i]], agents[order[j]]
		if !a.Start.Equal(b.Start) {
			return a.Start.Before(b.Start)
		}
		return a.Lane < b.Lane
	})
	return order
}

func tokensText(u usage.Usage) string {
	if u.Zero() {
		return "no tokens recorded"
	}
	return fmt.Sprintf("%s tokens (input %s, output %s, cache read %s, cache write %s)", usage.Tokens(u.Total()),
		usage.Tokens(u.Input), usage.Tokens(u.Output), usage.Tokens(u.CacheRead), usage.Tokens(u.CacheWrite))
}

// num writes n with thin separators: 1 234 567.
func num(n int64) string {
	s := fmt.Sprint(n)
	var out []string
	for len(s) > 3 {
		out = append([]string{s[len(s)-3:]}, out...)
		s = s[:len(s)-3]
	}
	return strings.Join(append([]string{s}, out...), "\u202f")
}

func clamp(x float64) float64 { return math.Max(0, math.Min(100, x)) }

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

func clock(t time.Time) string { return t.UTC().Format("15:04:05") }

// ticks are 5 to 10 marks on the axis at round durations.
func ticks(span time.Duration) []tick {
	steps := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}
	// Past the steps, whole days: a run of weeks, or one a damaged log
	// dates back centuries, gets no more marks than a short one.
	const day = 24 * time.Hour
	step := (span/8 + day - 1) / day * day
	for _, s := range steps {
		if span/s <= 8 {
			step = s
			break
		}
	}
	var out []tick
	for i := time.Duration(0); i <= span/step; i++ {
		d := i * step // never past span, so never overflows
		out = append(out, tick{Left: 100 * float64(d) / float64(span), Label: status.Duration(d)})
	}
	return out
}

// page is parsed on first use, not at every flowstate start.
var page = sync.OnceValue(func() *template.Template { return template.Must(template.New("page").Parse(pageHTML)) })
