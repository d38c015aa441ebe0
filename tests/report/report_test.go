// Package reporttest renders `flowstate report` pages in a real headless
// Chromium (Debian's chromium, which test.sh installs) at two window
// sizes: the page's structure after the browser parsed it (--dump-dom),
// no console message at all (the page has no script; a resource it tried
// to load would be refused by its Content-Security-Policy, and Chromium
// logs that to the console), and screenshots, kept in a directory the
// test prints (REPORT_SCREENSHOTS, else .cache/report-screenshots).
package reporttest

import (
	"bytes"
	"fmt"
	"image/png"
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

// browse runs headless Chromium on page with a fresh profile and one of
// args (--dump-dom, --screenshot=FILE), and returns its stdout and the
// console messages it logged.
func browse(t *testing.T, page string, width, height int, arg string) (stdout string, console []string) {
	t.Helper()
	cmd := exec.Command(chromium(t), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
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

var sizes = []struct {
	name          string
	width, height int
}{{"wide", 1440, 1000}, {"narrow", 420, 1000}}

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
			page := filepath.Join(project, "reports", id+".html")
			if err := os.MkdirAll(filepath.Dir(page), 0o755); err != nil {
				t.Fatal(err)
			}
			flowstate(t, project, 0, "report", "--workflow", id, "-o", page)
			raw, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			selfContained(t, string(raw))
			for _, size := range sizes {
				dom, console := browse(t, page, size.width, size.height, "--dump-dom")
				if len(console) > 0 {
					t.Errorf("%s: the page logged to the console:\n%s", size.name, strings.Join(console, "\n"))
				}
				structure(t, dom, page, agents)
				shot := filepath.Join(shots, fmt.Sprintf("%s-%s.png", c.name, size.name))
				if _, console := browse(t, page, size.width, size.height, "--screenshot="+shot); len(console) > 0 {
					t.Errorf("%s screenshot: console:\n%s", size.name, strings.Join(console, "\n"))
				}
				checkPNG(t, shot, size.width, size.height)
				t.Logf("screenshot: %s", shot)
			}
		})
	}
	fmt.Printf("report screenshots: %s\n", shots)
}

// The console check sees what it must refuse: a script's error and a
// resource the policy blocks.
func TestConsoleCheckCanFail(t *testing.T) {
	chromium(t)
	page := filepath.Join(t.TempDir(), "bad.html")
	writeFile(t, page, `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"></head>`+
		`<body><img src="http://127.0.0.1:9/x.png"><p>x</p></body></html>`)
	if _, console := browse(t, page, 800, 600, "--dump-dom"); len(console) == 0 {
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
	agentBar  = regexp.MustCompile(`<a class="bar agent [^"]*" href="#agent-(\d+)"`)
	agentRow  = regexp.MustCompile(`<tr id="agent-(\d+)"`)
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
		if _, err := os.Stat(filepath.Join(filepath.Dir(page), filepath.FromSlash(l[1]))); err != nil {
			t.Errorf("artifact link %s from the page leads nowhere: %v", l[1], err)
		}
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
