package report

// pageHTML is the page: inline CSS only, no script, no external resource.
// Bars are placed in percent of the axis, so the page follows the
// window's width; a label that does not fit its bar is cut, and every bar
// says all it knows in its title (hover) and links to its agent's row.
// A colour means one thing wherever it is used (done, running, failed,
// waiting, retried), in a light and a dark scheme, each text at 4.5:1 or
// more against what it is drawn on (tests/report measures it).
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="generator" content="flowstate {{.Version}}">
<title>{{.Title}}</title>
<style>
:root { color-scheme: light dark;
  --fg: #1d2330; --muted: #545c6b; --line: #d3d8e0; --bg: #fbfbfc; --panel: #ffffff; --head: #eef0f4; --target: #fff3bf;
  --bar-fg: #10141c; --state: #e4e7ec; --state-alt: #d3d8e0;
  --done: #17743a; --running: #0b5cad; --failed: #b3261e; --waiting: #8a5a00; --retried: #6b3fb3;
  --done-fill: #b7e4c7; --running-fill: #a9d6f5; --failed-fill: #f5b7b1; --waiting-fill: #ffe08a; --retried-fill: #d7c6f5; --idle-fill: #dfe3ea; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e9ef; --muted: #a3abb8; --line: #3a404b; --bg: #14171c; --panel: #1c2027; --head: #252a33; --target: #3a3320;
    --bar-fg: #e6e9ef; --state: #2a2f37; --state-alt: #353b45;
    --done: #6fd08c; --running: #7cc0f5; --failed: #ff8a80; --waiting: #f2c14e; --retried: #c5a8ff;
    --done-fill: #1f5130; --running-fill: #1d4566; --failed-fill: #6b2520; --waiting-fill: #5c4708; --retried-fill: #45306b; --idle-fill: #343a44; }
}
* { box-sizing: border-box; }
body { margin: 0; padding: 16px 20px 40px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--running); }
h1 { font-size: 20px; margin: 0 0 4px; word-break: break-all; }
h2 { font-size: 16px; margin: 28px 0 8px; }
.sub { color: var(--muted); margin: 0 0 12px; }
.facts { display: flex; flex-wrap: wrap; gap: 8px 24px; margin: 8px 0 4px; padding: 0; list-style: none; }
.facts li b { display: block; font-size: 12px; color: var(--muted); font-weight: 600; text-transform: uppercase; letter-spacing: .04em; }
.status-complete { color: var(--done); } .status-failed, .status-cancelled, .status-abandoned { color: var(--failed); }
.status-in_progress { color: var(--running); } .status-awaiting_approval, .status-paused { color: var(--waiting); }
.now { list-style: none; margin: 14px 0 0; padding: 0; display: grid; gap: 6px; }
.now li { background: var(--panel); border: 1px solid var(--line); border-left: 4px solid var(--muted); border-radius: 4px; padding: 6px 10px; }
.now li.gate, .now li.budget, .now li.paused { border-left-color: var(--waiting); }
.now li.failed, .now li.error, .now li.cancelled { border-left-color: var(--failed); }
.now li.retry { border-left-color: var(--retried); } .now li.unpriced { border-left-color: var(--waiting); }
.now .do { display: block; color: var(--muted); font-size: 13px; }
.now .do code { color: var(--fg); }
.chart { display: grid; grid-template-columns: 104px 1fr; gap: 0 8px; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
.chart .label { color: var(--muted); font-size: 12px; align-self: center; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.track { position: relative; min-width: 0; }
.axis { height: 20px; border-bottom: 1px solid var(--line); }
.tick { position: absolute; top: 0; font-size: 11px; color: var(--muted); transform: translateX(-50%); white-space: nowrap; }
.tick:first-child { transform: none; }
.tick.last { transform: translateX(-100%); }
.row { height: 26px; margin: 3px 0; }
.bar { position: absolute; top: 2px; bottom: 2px; min-width: 2px; border-radius: 3px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis;
  font-size: 11px; line-height: 18px; padding: 0 4px; color: var(--bar-fg); text-decoration: none; display: block; background-color: var(--idle-fill); }
.state { top: 0; bottom: 0; line-height: 26px; font-weight: 600; border: 1px solid var(--line); background-color: var(--state); }
.state.alt { background-color: var(--state-alt); }
.state.current { background-color: var(--running-fill); }
.state.failed { background-color: var(--failed-fill); }
.state.partial { box-shadow: inset 0 -3px 0 var(--failed); }
.state.point { width: 12px; height: 12px; min-width: 0; top: 7px; padding: 0; border: 2px solid var(--fg); border-radius: 2px; transform: translateX(-50%) rotate(45deg); background-color: var(--done-fill); }
.rewound { background-image: repeating-linear-gradient(135deg, var(--panel) 0 3px, transparent 3px 9px); }
.wait { background-color: var(--waiting-fill); border: 1px solid var(--waiting); }
.wait.pause { background-color: var(--idle-fill); border-color: var(--muted); }
.markrow { height: 22px; }
.mark { position: absolute; top: 0; transform: translateX(-50%); font-size: 15px; line-height: 20px; cursor: default; }
.mark.error, .mark.cancel { color: var(--failed); } .mark.retry, .mark.rewind { color: var(--retried); }
.lanes { position: relative; }
.lane { position: relative; height: 22px; }
.agent { top: 2px; bottom: 2px; border-left: 3px solid var(--muted); }
.agent.done { background-color: var(--done-fill); border-left-color: var(--done); }
.agent.failed { background-color: var(--failed-fill); border-left-color: var(--failed); }
.agent.running { background-color: var(--running-fill); border-left-color: var(--running); }
.agent.stuck { background-color: var(--failed-fill); border-left-color: var(--failed); box-shadow: inset 0 0 0 2px var(--failed); }
.agent.lost { border-left-style: dashed; }
.agent.retry { box-shadow: inset 0 0 0 2px var(--retried); }
.agent:hover, .agent:focus { outline: 2px solid var(--fg); z-index: 2; }
.waves { position: relative; height: 18px; }
.wave { position: absolute; top: 3px; height: 14px; border: 1px solid var(--muted); border-bottom: none; font-size: 10px; line-height: 12px; padding: 0 3px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; color: var(--muted); }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 10px 0 0; font-size: 12px; color: var(--muted); list-style: none; padding: 0; }
.legend .sw { display: inline-block; position: relative; top: 1px; width: 22px; height: 12px; margin-right: 5px; border-radius: 2px; border-left: 3px solid var(--muted); background-color: var(--idle-fill); }
.sw.done { background-color: var(--done-fill); border-left-color: var(--done); } .sw.running { background-color: var(--running-fill); border-left-color: var(--running); }
.sw.failed, .sw.stuck { background-color: var(--failed-fill); border-left-color: var(--failed); } .sw.stuck { box-shadow: inset 0 0 0 2px var(--failed); }
.sw.waiting { background-color: var(--waiting-fill); border-left-color: var(--waiting); } .sw.retry { box-shadow: inset 0 0 0 2px var(--retried); }
.sw.lost { border-left-style: dashed; } .sw.rewound { background-image: repeating-linear-gradient(135deg, var(--panel) 0 3px, transparent 3px 9px); }
.sw.end { width: 10px; height: 10px; border: 2px solid var(--fg); background-color: var(--done-fill); transform: rotate(45deg); margin: 0 8px 0 4px; }
table { border-collapse: collapse; width: 100%; background: var(--panel); border: 1px solid var(--line); font-size: 13px; }
th, td { padding: 4px 6px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: var(--head); font-weight: 600; font-size: 12px; white-space: nowrap; }
th.n, td.n { text-align: right; }
td.n { font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:target { background: var(--target); }
.st-done { color: var(--done); } .st-failed, .st-stuck { color: var(--failed); } .st-running { color: var(--running); }
.scroll { overflow-x: auto; }
code { font-size: 12px; }
td.path code { overflow-wrap: normal; }
.nowrap { white-space: nowrap; }
tr.why td { border-top: none; padding-top: 0; }
footer { margin-top: 28px; color: var(--muted); font-size: 12px; }
@media (max-width: 1500px) { .hide-mid { display: none; } }
@media (max-width: 700px) { body { padding: 10px; } .chart { grid-template-columns: 64px 1fr; padding: 8px; } .hide-narrow { display: none; } .tick.odd { display: none; } }
</style>
</head>
<body>
<header>
<h1 id="workflow">{{.ID}}</h1>
<p class="sub">{{.Command}}{{if .Scope}} · {{.Scope}}{{end}}{{if .Description}} — {{.Description}}{{end}}</p>
<ul class="facts" id="facts">
<li><b>Status</b><span class="status-{{.Status}}">{{.Status}}</span></li>
<li><b>Started</b>{{.Started}}</li>
{{if .Ended}}<li><b>Ended</b>{{.Ended}}{{if .EndState}} in {{.EndState}}{{end}}</li>{{end}}
<li><b>{{if .Active}}So far{{else}}Took{{end}}</b><span id="took">{{.Took}}</span></li>
<li><b>Tokens</b><span id="total-tokens">{{.Tokens}}</span></li>
{{if .Money}}<li><b>Cost</b><span id="total-cost">{{.Money}}</span></li>{{end}}
<li><b>Agents</b>{{.Counts}}</li>
</ul>
{{if .Notes}}<ul class="now" id="now" aria-label="what happened and what now">{{range .Notes}}<li class="{{.Kind}}">{{.Text}}{{if .Do}}<span class="do">next: <code>{{.Do}}</code></span>{{end}}</li>{{end}}</ul>{{end}}
</header>

<h2>Timeline</h2>
<section class="chart" id="timeline" aria-label="timeline of states and agents">
<div class="label"></div>
<div class="track axis">{{range .Ticks}}<span class="tick{{if .Odd}} odd{{end}}{{if .Last}} last{{end}}" style="left:{{.Left}}%">{{.Label}}</span>{{end}}</div>

<div class="label">states</div>
<div class="track row" id="states">{{range .States}}<span class="bar {{.Class}}" style="left:{{.Left}}%;width:{{.Width}}%" title="{{.Title}}">{{if not .Point}}{{.Label}}{{end}}</span>{{end}}</div>

<div class="label">waiting for a person</div>
<div class="track row" id="waits">{{range .Waits}}<span class="bar {{.Class}}" style="left:{{.Left}}%;width:{{.Width}}%" title="{{.Title}}">{{.Label}}</span>{{end}}</div>

<div class="label">failures, retries</div>
<div class="track markrow" id="marks">{{range .Marks}}<span class="mark {{.Kind}}" style="left:{{.Left}}%" title="{{.Title}}">{{.Glyph}}</span>{{end}}</div>

<div class="label">waves</div>
<div class="track waves" id="waves">{{range .Waves}}<span class="wave" style="left:{{.Left}}%;width:{{.Width}}%" title="{{.Title}}">{{.Label}}</span>{{end}}</div>

<div class="label">agents</div>
<div class="track lanes" id="lanes" style="min-height:{{.Height}}px">{{range $i, $lane := .Lanes}}
<div class="lane" data-lane="{{$i}}">{{range $lane}}<a class="bar {{.Class}}" href="#agent-{{.Agent}}" style="left:{{.Left}}%;width:{{.Width}}%" title="{{.Title}}" data-wave="{{.Wave}}">{{.Label}}</a>{{end}}</div>{{end}}
</div>
</section>
<ul class="legend" id="legend">{{range .Legend}}<li><span class="sw {{.Class}}"></span>{{.Label}}</li>{{end}}<li><span class="sw end"></span>the state it ended in</li><li>✗ error · ↻ retry · ↺ rewind · ⊘ cancel</li></ul>

<h2>Per state</h2>
<div class="scroll">
<table id="summary">
<thead><tr><th>State</th><th class="n">Time</th><th class="n">Agents</th><th class="n">Tokens</th>{{if .Money}}<th class="n">Cost</th>{{end}}<th>Notes</th></tr></thead>
<tbody>{{range .Summary}}<tr><td>{{.State}}</td><td class="n">{{.Took}}</td><td class="n">{{.Agents}}</td><td class="n">{{.Tokens}}</td>{{if $.Money}}<td class="n">{{.Money}}</td>{{end}}<td>{{.Notes}}</td></tr>{{end}}</tbody>
</table>
</div>

<h2>Agents</h2>
{{if .ArtifactDir}}<p class="sub" id="artifact-dir">Artifacts are in <code>{{.ArtifactDir}}</code></p>{{end}}
<div class="scroll">
<table id="agents">
<thead><tr><th class="n">#</th><th>Agent</th><th>State</th><th class="n hide-mid">Wave</th><th>Status</th><th class="n">Start</th><th class="n">Took</th><th class="n">Tokens</th><th class="n hide-narrow">Input</th><th class="n hide-narrow">Output</th><th class="n hide-narrow">Cache read</th><th class="n hide-narrow">Cache write</th>{{if .Money}}<th class="n">Cost</th>{{end}}<th class="hide-narrow">Model</th><th class="n hide-mid">Requests</th><th class="n hide-mid">Tools</th><th>Artifact</th></tr></thead>
<tbody>{{range .Agents}}<tr id="agent-{{.N}}" class="{{.Class}}"><td class="n">{{.N}}</td><td class="nowrap">{{.Type}}{{if .Worker}} <code>{{.Worker}}</code>{{end}}{{if .Attempt}} (attempt {{.Attempt}}){{end}}{{if .Branch}}<br><small>{{.Branch}}</small>{{end}}</td><td>{{.State}}{{if .Rewound}} (rewound){{end}}</td><td class="n hide-mid">{{.Wave}}</td><td class="st-{{.Status}}">{{.Status}}</td><td class="n">{{.Start}}</td><td class="n">{{.Took}}</td><td class="n">{{.Total}}</td><td class="n hide-narrow">{{.Input}}</td><td class="n hide-narrow">{{.Output}}</td><td class="n hide-narrow">{{.CacheRead}}</td><td class="n hide-narrow">{{.CacheWrite}}</td>{{if $.Money}}<td class="n">{{.Money}}</td>{{end}}<td class="hide-narrow nowrap">{{.Model}}</td><td class="n hide-mid">{{.Requests}}</td><td class="n hide-mid">{{.ToolUses}}</td><td class="path">{{if .Link}}<a class="artifact" href="{{.Link}}" title="{{.Path}}"><code>{{range .Artifact}}{{.}}<wbr>{{end}}</code></a>{{else if .Artifact}}<code title="{{.Path}}">{{range .Artifact}}{{.}}<wbr>{{end}}</code>{{end}}</td></tr>{{if .Error}}
<tr class="why {{.Class}}"><td></td><td colspan="17" class="st-{{.Status}}">{{.Error}}</td></tr>{{end}}{{end}}</tbody>
</table>
</div>

{{if .Main}}<h2>Main thread</h2>
<div class="scroll">
<table id="main-thread">
<thead><tr><th>State</th><th>Model</th><th class="n">Tokens</th><th class="n">Input</th><th class="n">Output</th><th class="n">Cache read</th><th class="n">Cache write</th><th class="n">Requests</th>{{if .Money}}<th class="n">Cost</th>{{end}}</tr></thead>
<tbody>{{range .Main}}<tr><td>{{.State}}</td><td>{{.Model}}</td><td class="n">{{.Total}}</td><td class="n">{{.Input}}</td><td class="n">{{.Output}}</td><td class="n">{{.CacheRead}}</td><td class="n">{{.CacheWrite}}</td><td class="n">{{.Requests}}</td>{{if $.Money}}<td class="n">{{.Money}}</td>{{end}}</tr>{{end}}</tbody>
</table>
</div>{{end}}

<footer>Written by flowstate {{.Version}} at {{.Generated}} from the workflow's events.jsonl and checkpoint. Tokens are Claude Code's usage as the hooks recorded it; work a rewind took back is still counted.</footer>
</body>
</html>
`
