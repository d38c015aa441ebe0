// Package reporttest renders `flowstate report` pages, written outside
// the project, in a real headless Chromium (Debian's chromium, which
// test.sh installs) at two window sizes and in both colour schemes: the
// page's structure after the browser parsed it (--dump-dom), each agent
// under its own worker with that worker's artifact, no console message
// at all (the page has no script; a resource it tried to load would be
// refused by its Content-Security-Policy, and Chromium logs that to the
// console); then, in a copy with a measuring script added, the contrast
// of every text as the browser computed its colours, the axis labels
// apart, the tables within the window; and screenshots, kept in a
// directory the test prints (REPORT_SCREENSHOTS, else
// .cache/report-screenshots).
package reporttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

var bin string

func TestMain(m *testing.M) { testenv.RunWithBinary(m, &bin) }

// chromium finds the browser; without it the test is skipped, unless
// FLOWSTATE_REQUIRE_BROWSER is set (test.sh sets it after installing
// Debian's chromium), where a missing browser fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("FLOWSTATE_REQUIRE_BROWSER") != "" {
		t.Fatal("chromium is not installed (apt-get install chromium; test.sh does)")
	}
	t.Skip("chromium is not installed; test.sh installs it (apt-get install chromium)")
	return ""
}

// browse runs headless Chromium on page with a fresh profile, in the dark
// colour scheme or the light one, and one of args (--dump-dom,
// --screenshot=FILE), and returns its stdout and the console messages it
// logged.
func browse(t *testing.T, page string, width, height int, dark bool, arg string) (stdout string, console []string) {
	t.Helper()
	scheme := "1" // blink's preferredColorScheme: 0 dark, 1 light
	if dark {
		scheme = "0"
	}
	cmd := exec.Command(chromium(t), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0", "--blink-settings=preferredColorScheme="+scheme,
		fmt.Sprintf("--window-size=%d,%d", width, height), arg, "file://"+page)
	cmd.Env = testenv.Env(t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", arg, err, errb.String())
	}
	for _, line := range strings.Split(errb.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			console = append(console, line)
		}
	}
	return out.String(), console
}

// screenshots is where the screenshots are kept.
func screenshots(t *testing.T) string {
	dir := os.Getenv("REPORT_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(testenv.RepoRoot(), ".cache", "report-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sizes are a wide window (a table must fit its 1400 px of page) and a
// phone's 400 px.
var sizes = []struct {
	name          string
	width, height int
}{{"wide", 1440, 1000}, {"narrow", 400, 1000}}

func TestReportInChromium(t *testing.T) {
	chromium(t)
	shots := screenshots(t)
	for _, c := range []struct {
		name string
		n    int
	}{{"3-agents", 3}, {"200-agents", 200}} {
		t.Run(c.name, func(t *testing.T) {
			project := t.TempDir()
			id := "coordinate-report-" + c.name
			agents := fixture(t, project, id, c.n)
			// Outside the project, as a person writes a page to share.
			page := filepath.Join(t.TempDir(), "pages", id+".html")
			if err := os.MkdirAll(filepath.Dir(page), 0o755); err != nil {
				t.Fatal(err)
			}
			flowstate(t, project, 0, "report", "--workflow", id, "-o", page)
			raw, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			selfContained(t, string(raw))
			measuring := withMeasure(t, page, string(raw))
			for _, size := range sizes {
				dom, console := browse(t, page, size.width, size.height, false, "--dump-dom")
				if len(console) > 0 {
					t.Errorf("%s: the page logged to the console:\n%s", size.name, strings.Join(console, "\n"))
				}
				structure(t, dom, page, agents)
				for _, dark := range []bool{false, true} {
					scheme := map[bool]string{false: "light", true: "dark"}[dark]
					m := measure(t, measuring, size.width, size.height, dark)
					m.check(t, size.name+" "+scheme, size.name == "wide")
					shot := filepath.Join(shots, fmt.Sprintf("%s-%s-%s.png", c.name, size.name, scheme))
					if _, console := browse(t, page, size.width, size.height, dark, "--screenshot="+shot); len(console) > 0 {
						t.Errorf("%s screenshot: console:\n%s", size.name, strings.Join(console, "\n"))
					}
					checkPNG(t, shot, size.width, size.height)
					t.Logf("screenshot: %s", shot)
				}
			}
		})
	}
	fmt.Printf("report screenshots: %s\n", shots)
}

// measureJS measures the page as Chromium laid it out and computed its
// styles, and writes what it found as JSON into <pre id="measured">:
// every text whose contrast with what it is drawn on (its element's
// background, else its ancestors', alpha composited) is below 4.5:1;
// the visible axis labels that overlap; the tables wider than their
// box; the tallest row of the agents table; and the colour scheme.
const measureJS = `(function () {
  var out = {dark: matchMedia('(prefers-color-scheme: dark)').matches, low: [], overlaps: [], overflow: [], checked: 0, tallest: 0};
  function rgba(s) { var m = /rgba?\(([^)]*)\)/.exec(s); if (!m) return [0, 0, 0, 0]; var p = m[1].split(',').map(parseFloat); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; }
  function over(a, b) { return [a[0]*a[3] + b[0]*(1-a[3]), a[1]*a[3] + b[1]*(1-a[3]), a[2]*a[3] + b[2]*(1-a[3]), 1]; }
  function background(el) {
    var layers = [];
    for (var e = el; e; e = e.parentElement) { var c = rgba(getComputedStyle(e).backgroundColor); if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
    var b = out.dark ? [0, 0, 0, 1] : [255, 255, 255, 1];
    for (var i = layers.length - 1; i >= 0; i--) b = over(layers[i], b);
    return b;
  }
  function lum(c) { function f(v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); } return 0.2126*f(c[0]) + 0.7152*f(c[1]) + 0.0722*f(c[2]); }
  function ratio(a, b) { var x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); }
  var w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT), seen = new Set();
  while (w.nextNode()) {
    var el = w.currentNode.parentElement;
    if (!w.currentNode.textContent.trim() || seen.has(el) || !el.getClientRects().length) continue;
    seen.add(el);
    var st = getComputedStyle(el), b = background(el), k = ratio(over(rgba(st.color), b), b);
    out.checked++;
    if (k < 4.5) out.low.push({text: w.currentNode.textContent.trim().slice(0, 40), element: el.tagName + '.' + el.className, ratio: Math.round(k*100)/100, color: st.color, background: 'rgb(' + b.slice(0, 3).map(Math.round).join(',') + ')'});
  }
  var ticks = Array.prototype.filter.call(document.querySelectorAll('.tick'), function (e) { return getComputedStyle(e).display !== 'none'; });
  var axis = document.querySelector('.axis').getBoundingClientRect();
  for (var i = 0; i < ticks.length; i++) {
    var r = ticks[i].getBoundingClientRect();
    if (r.left < axis.left - 1 || r.right > axis.right + 1) out.overlaps.push(ticks[i].textContent + ' leaves the axis');
    if (i + 1 < ticks.length && r.right + 2 > ticks[i+1].getBoundingClientRect().left) out.overlaps.push(ticks[i].textContent + ' overlaps ' + ticks[i+1].textContent);
  }
  Array.prototype.forEach.call(document.querySelectorAll('.scroll'), function (s) { if (s.scrollWidth > s.clientWidth + 1) out.overflow.push(s.firstElementChild.id + ' ' + s.scrollWidth + 'px in ' + s.clientWidth + 'px'); });
  Array.prototype.forEach.call(document.querySelectorAll('#agents tbody tr'), function (r) { out.tallest = Math.max(out.tallest, r.getBoundingClientRect().height); });
  var pre = document.createElement('pre'); pre.id = 'measured'; pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
})();`

// withMeasure writes a copy of the page beside it with measureJS run at
// its end (its policy let through that one inline script), and returns
// its path.
func withMeasure(t *testing.T, page, raw string) string {
	t.Helper()
	policy := `content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`
	if !strings.Contains(raw, policy) {
		t.Fatalf("the page's policy is not %s", policy)
	}
	raw = strings.Replace(raw, policy, `content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'unsafe-inline'"`, 1)
	raw = strings.Replace(raw, "</body>", "<script>"+measureJS+"</script>\n</body>", 1)
	copyPath := strings.TrimSuffix(page, ".html") + ".measure.html"
	writeFile(t, copyPath, raw)
	return copyPath
}

// measured is what measureJS found.
type measured struct {
	Dark    bool    `json:"dark"`
	Checked int     `json:"checked"`
	Tallest float64 `json:"tallest"`
	Low     []struct {
		Text, Element, Color, Background string
		Ratio                            float64
	} `json:"low"`
	Overlaps []string `json:"overlaps"`
	Overflow []string `json:"overflow"`
}

var measuredPre = regexp.MustCompile(`(?s)<pre id="measured">(.*?)</pre>`)

func measure(t *testing.T, page string, width, height int, dark bool) measured {
	t.Helper()
	dom, console := browse(t, page, width, height, dark, "--dump-dom")
	if len(console) > 0 {
		t.Errorf("the measuring script logged:\n%s", strings.Join(console, "\n"))
	}
	m := measuredPre.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the measuring script wrote nothing")
	}
	var got measured
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &got); err != nil {
		t.Fatalf("measured %s: %v", m[1], err)
	}
	if got.Dark != dark {
		t.Fatalf("asked for the dark scheme %v, the page saw %v", dark, got.Dark)
	}
	return got
}

// check fails on text below 4.5:1, axis labels that overlap or leave the
// axis, and (wide) a table wider than the page or an agent row taller
// than two lines.
func (m measured) check(t *testing.T, where string, wide bool) {
	t.Helper()
	if m.Checked < 50 {
		t.Errorf("%s: only %d texts measured", where, m.Checked)
	}
	for _, l := range m.Low {
		t.Errorf("%s: %q (%s) at %.2f:1, %s on %s", where, l.Text, l.Element, l.Ratio, l.Color, l.Background)
	}
	for _, o := range m.Overlaps {
		t.Errorf("%s: axis label %s", where, o)
	}
	if wide {
		for _, o := range m.Overflow {
			t.Errorf("%s: table %s: wider than the page", where, o)
		}
		if m.Tallest > 48 {
			t.Errorf("%s: an agent row %.0f px tall; a path or a name wraps", where, m.Tallest)
		}
	}
}

// The console check sees what it must refuse: a script's error and a
// resource the policy blocks.
func TestConsoleCheckCanFail(t *testing.T) {
	chromium(t)
	page := filepath.Join(t.TempDir(), "bad.html")
	writeFile(t, page, `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"></head>`+
		`<body><img src="http://127.0.0.1:9/x.png"><p>x</p></body></html>`)
	if _, console := browse(t, page, 800, 600, false, "--dump-dom"); len(console) == 0 {
		t.Errorf("a page loading an image from the network logged nothing: the console check cannot fail")
	}
}

// selfContained: nothing the page refers to is outside it, and its
// policy refuses anything that would be.
func selfContained(t *testing.T, page string) {
	t.Helper()
	if !strings.Contains(page, `http-equiv="Content-Security-Policy" content="default-src 'none';`) {
		t.Errorf("the page has no Content-Security-Policy refusing every resource")
	}
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)<script`), regexp.MustCompile(`(?i)<link\b`), regexp.MustCompile(`(?i)\bsrc=`),
		regexp.MustCompile(`(?i)@import|url\(`), regexp.MustCompile(`(?i)href="(https?:)?//`),
	} {
		if m := bad.FindString(page); m != "" {
			t.Errorf("the page refers to something outside it: %q", m)
		}
	}
}

var (
	agentBar = regexp.MustCompile(`<a class="bar agent [^"]*" href="#agent-(\d+)"`)
	agentRow = regexp.MustCompile(`<tr id="agent-(\d+)"`)
	// A row of the agents table: its worker, its status, its artifact's file.
	paired    = regexp.MustCompile(`<tr id="agent-\d+" class="([a-z]+)">.*?<code>([a-z_0-9]+)</code>.*?<td class="path">(.*?)</td></tr>`)
	pathOf    = regexp.MustCompile(`title="([^"]*)"`)
	stateBar  = regexp.MustCompile(`<span class="bar state[^"]*"`)
	waitBar   = regexp.MustCompile(`<span class="bar wait gate"`)
	markGlyph = regexp.MustCompile(`<span class="mark (error|retry|rewind)"`)
	artifact  = regexp.MustCompile(`<a class="artifact" href="([^"]+)"`)
	tokensOf  = regexp.MustCompile(`<a class="bar agent [^"]*"[^>]*>[^<]* · [0-9.]+[kM]?</a>`)
)

// structure checks the page as the browser parsed it: a bar and a table
// row for every agent, each bar linking to its row and labelled with its
// tokens; the states, the gate's wait, the error, retry and rewind
// marked; the partial failure and the rewound work; links to the
// artifacts that exist.
func structure(t *testing.T, dom, page string, agents int) {
	t.Helper()
	bars, rows := agentBar.FindAllStringSubmatch(dom, -1), agentRow.FindAllStringSubmatch(dom, -1)
	if len(bars) != agents || len(rows) != agents {
		t.Errorf("%d agent bars and %d agent rows, want %d each", len(bars), len(rows), agents)
	}
	ids := map[string]bool{}
	for _, r := range rows {
		ids[r[1]] = true
	}
	for _, b := range bars {
		if !ids[b[1]] {
			t.Errorf("bar links to #agent-%s, which is no row", b[1])
		}
	}
	if n := len(tokensOf.FindAllString(dom, -1)); n != agents {
		t.Errorf("%d agent bars show their tokens, want %d", n, agents)
	}
	// initialize, research, plan, implement, test, debug, test, document, complete.
	if n := len(stateBar.FindAllString(dom, -1)); n != 9 {
		t.Errorf("%d state bars, want 9", n)
	}
	if n := len(waitBar.FindAllString(dom, -1)); n != 1 {
		t.Errorf("%d gate waits shown, want 1", n)
	}
	marks := map[string]bool{}
	for _, m := range markGlyph.FindAllStringSubmatch(dom, -1) {
		marks[m[1]] = true
	}
	if len(marks) != 3 {
		t.Errorf("marks %v, want an error, a retry and a rewind", marks)
	}
	for _, want := range []string{`class="bar state rewound`, `id="timeline"`, `id="summary"`, `id="total-tokens"`, `id="waves"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page has no %s", want)
		}
	}
	if agents > 10 && !strings.Contains(dom, "partial failure") {
		t.Errorf("the partial failure in implement is not marked")
	}
	links := artifact.FindAllStringSubmatch(dom, -1)
	if len(links) == 0 {
		t.Errorf("no artifact is linked")
	}
	for _, l := range links {
		u, err := url.Parse(html.UnescapeString(l[1]))
		if err != nil || u.Scheme != "" && u.Scheme != "file" {
			t.Errorf("artifact link %s: not a link to a file: %v", l[1], err)
			continue
		}
		path := u.Path
		if u.Scheme == "" {
			path = filepath.Join(filepath.Dir(page), filepath.FromSlash(u.Path))
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("artifact link %s from the page leads nowhere: %v", l[1], err)
		}
	}
	// Each agent is shown under its own worker, with that worker's
	// artifact (the fixture names a worker's file after it); the agents
	// of a wave started in the reverse order of their launches.
	workerRows := paired.FindAllStringSubmatch(dom, -1)
	if len(workerRows) < agents-1 { // the classifier has no worker
		t.Errorf("%d agent rows with a worker, want %d", len(workerRows), agents-1)
	}
	for _, r := range workerRows {
		file := ""
		if m := pathOf.FindStringSubmatch(r[3]); m != nil {
			file = m[1]
		}
		if file != "" && !strings.HasSuffix(file, "/"+r[2]+".md") {
			t.Errorf("agent of worker %s (%s) shows the artifact %s", r[2], r[1], file)
		}
	}
	if n := strings.Count(dom, `<td class="path"><a class="artifact"`); n < agents/2 {
		t.Errorf("%d artifacts linked from the agents table, want most of %d", n, agents)
	}
	if !strings.Contains(dom, `id="now"`) || !strings.Contains(dom, "no price for claude-haiku-5-5") {
		t.Errorf("the page does not say at its top what befell the run (the unpriced classifier)")
	}
	if agents > 10 && !strings.Contains(dom, "implement_3 (no report at") {
		t.Errorf("the page does not name the failed worker at its top")
	}
}

func checkPNG(t *testing.T, path string, width, height int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	if cfg.Width != width || cfg.Height != height {
		t.Errorf("screenshot %s is %dx%d, want %dx%d", path, cfg.Width, cfg.Height, width, height)
	}
}
