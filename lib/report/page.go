package report

// pageHTML is the page: inline CSS only, no script, no external resource.
// Bars are placed in percent of the axis, so the page follows the
// window's width; a label that does not fit its bar is cut, and every bar
// says all it knows in its title (hover) and links to its agent's row.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="generator" content="flowstate {{.Version}}">
<title>{{.Title}}</title>
<style>
:root { --fg: #1d2330; --muted: #5c6473; --line: #d9dde4; --bg: #fbfbfc; --done: #2b9348; --failed: #d62828; --running: #e09f3e; --stuck: #9d0208; }
* { box-sizing: border-box; }
body { margin: 0; padding: 16px 20px 40px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 20px; margin: 0 0 4px; word-break: break-all; }
h2 { font-size: 16px; margin: 28px 0 8px; }
.sub { color: var(--muted); margin: 0 0 12px; }
.facts { display: flex; flex-wrap: wrap; gap: 8px 24px; margin: 8px 0 4px; padding: 0; list-style: none; }
.facts li b { display: block; font-size: 12px; color: var(--muted); font-weight: 600; text-transform: uppercase; letter-spacing: .04em; }
.status-complete { color: var(--done); } .status-failed, .status-cancelled, .status-abandoned { color: var(--failed); }
.chart { display: grid; grid-template-columns: 104px 1fr; gap: 0 8px; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
.chart .label { color: var(--muted); font-size: 12px; align-self: center; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.track { position: relative; min-width: 0; }
.axis { height: 20px; border-bottom: 1px solid var(--line); }
.tick { position: absolute; top: 0; font-size: 11px; color: var(--muted); transform: translateX(-50%); white-space: nowrap; }
.tick:first-child { transform: none; }
.gridline { position: absolute; top: 0; bottom: 0; width: 0; border-left: 1px dotted var(--line); }
.row { height: 26px; margin: 3px 0; }
.bar { position: absolute; top: 2px; bottom: 2px; min-width: 2px; border-radius: 3px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis;
  font-size: 11px; line-height: 18px; padding: 0 4px; color: #10141c; text-decoration: none; display: block; }
.state { top: 0; bottom: 0; line-height: 26px; font-weight: 600; border: 1px solid rgba(0,0,0,.12); }
.state.current { box-shadow: inset 0 -3px 0 var(--running); }
.state.failed { box-shadow: inset 0 -3px 0 var(--failed); }
.state.partial { outline: 2px dashed var(--failed); outline-offset: -2px; }
.rewound { opacity: .55; background-image: repeating-linear-gradient(135deg, rgba(255,255,255,.65) 0 4px, transparent 4px 8px); }
.wait { background: repeating-linear-gradient(45deg, #ffe8a3 0 6px, #fff4d1 6px 12px); border: 1px solid #e0b43c; }
.wait.pause { background: repeating-linear-gradient(45deg, #dfe3ea 0 6px, #eef0f4 6px 12px); border-color: #9aa3b2; }
.markrow { height: 22px; }
.mark { position: absolute; top: 0; transform: translateX(-50%); font-size: 15px; line-height: 20px; cursor: default; }
.mark.error, .mark.cancel { color: var(--failed); } .mark.retry { color: var(--running); } .mark.rewind { color: #3a0ca3; }
.lanes { position: relative; }
.lane { position: relative; height: 22px; }
.lane:nth-child(even) { background: rgba(0,0,0,.025); }
.agent { top: 2px; bottom: 2px; border-left: 3px solid var(--muted); }
.agent.done { border-left-color: var(--done); }
.agent.failed { border-left-color: var(--failed); background-image: repeating-linear-gradient(135deg, rgba(214,40,40,.35) 0 3px, transparent 3px 7px); }
.agent.running { border-left-color: var(--running); box-shadow: inset 0 0 0 1px var(--running); }
.agent.stuck { border-left-color: var(--stuck); box-shadow: inset 0 0 0 2px var(--stuck); }
.agent.lost { border-left-style: dashed; opacity: .7; }
.agent.retry { outline: 1px dashed var(--fg); outline-offset: -1px; }
.agent:hover, .agent:focus { filter: brightness(1.08); outline: 2px solid var(--fg); z-index: 2; }
.waves { position: relative; height: 18px; }
.wave { position: absolute; top: 3px; height: 12px; border: 1px solid; border-bottom: none; font-size: 10px; line-height: 10px; padding: 0 3px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; color: var(--muted); }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 10px 0 0; font-size: 12px; color: var(--muted); list-style: none; padding: 0; }
.legend span.sw { display: inline-block; width: 22px; height: 12px; vertical-align: -1px; margin-right: 5px; background: #cfd6e3; border-radius: 2px; position: relative; top: 0; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); font-size: 13px; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: #f1f3f6; font-weight: 600; font-size: 12px; white-space: nowrap; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:target { background: #fff3bf; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
.st-done { color: var(--done); } .st-failed, .st-stuck { color: var(--failed); } .st-running { color: var(--running); }
.scroll { overflow-x: auto; }
code { font-size: 12px; word-break: break-all; }
footer { margin-top: 28px; color: var(--muted); font-size: 12px; }
@media (max-width: 700px) { body { padding: 10px; } .chart { grid-template-columns: 64px 1fr; padding: 8px; } .hide-narrow { display: none; } }
</style>
</head>
<body>
<header>
<h1 id="workflow">{{.ID}}</h1>
<p class="sub">{{.Command}}{{if .Scope}} · {{.Scope}}{{end}}{{if .Description}} — {{.Description}}{{end}}</p>
<ul class="facts" id="facts">
<li><b>Status</b><span class="status-{{.Status}}">{{.Status}}</span></li>
<li><b>Started</b>{{.Started}}</li>
{{if .Ended}}<li><b>Ended</b>{{.Ended}}</li>{{end}}
<li><b>{{if .Active}}So far{{else}}Took{{end}}</b>{{.Took}}</li>
<li><b>Tokens</b><span id="total-tokens">{{.Tokens}}</span></li>
{{if .Money}}<li><b>Cost</b><span id="total-cost">{{.Money}}</span></li>{{end}}
<li><b>Agents</b>{{.Counts}}</li>
</ul>
</header>

<h2>Timeline</h2>
<section class="chart" id="timeline" aria-label="timeline of states and agents">
<div class="label"></div>
<div class="track axis">{{range .Ticks}}<span class="tick" style="left:{{.Left}}%">{{.Label}}</span>{{end}}</div>

<div class="label">states</div>
<div class="track row" id="states">{{range .States}}<span class="bar {{.Class}}" style="left:{{.Left}}%;width:{{.Width}}%;background-color:{{.Color}}" title="{{.Title}}">{{.Label}}</span>{{end}}</div>

<div class="label">waiting for a person</div>
<div class="track row" id="waits">{{range .Waits}}<span class="bar {{.Class}}" style="left:{{.Left}}%;width:{{.Width}}%" title="{{.Title}}">{{.Label}}</span>{{end}}</div>

<div class="label">failures, retries</div>
<div class="track markrow" id="marks">{{range .Marks}}<span class="mark {{.Kind}}" style="left:{{.Left}}%" title="{{.Title}}">{{.Glyph}}</span>{{end}}</div>

<div class="label">waves</div>
<div class="track waves" id="waves">{{range .Waves}}<span class="wave" style="left:{{.Left}}%;width:{{.Width}}%;border-color:{{.Color}}" title="{{.Title}}">{{.Label}}</span>{{end}}</div>

<div class="label">agents</div>
<div class="track lanes" id="lanes" style="min-height:{{.Height}}px">{{range $i, $lane := .Lanes}}
<div class="lane" data-lane="{{$i}}">{{range $lane}}<a class="bar {{.Class}}" href="#agent-{{.Agent}}" style="left:{{.Left}}%;width:{{.Width}}%;background-color:{{.Color}}" title="{{.Title}}" data-wave="{{.Wave}}">{{.Label}}</a>{{end}}</div>{{end}}
</div>
</section>
<ul class="legend" id="legend">{{range .Legend}}<li><span class="sw bar agent {{.Class}}"></span>{{.Label}}</li>{{end}}<li><span class="sw wait"></span>waiting for approval</li><li><span class="sw wait pause"></span>paused</li><li>✗ error · ↻ retry · ↺ rewind · ⊘ cancel</li></ul>

<h2>Per state</h2>
<div class="scroll">
<table id="summary">
<thead><tr><th>State</th><th>Time</th><th>Agents</th><th>Tokens</th>{{if .Money}}<th>Cost</th>{{end}}<th>Notes</th></tr></thead>
<tbody>{{range .Summary}}<tr><td><span class="swatch" style="background:{{.Color}}"></span>{{.State}}</td><td class="n">{{.Took}}</td><td class="n">{{.Agents}}</td><td class="n">{{.Tokens}}</td>{{if $.Money}}<td class="n">{{.Money}}</td>{{end}}<td>{{.Notes}}</td></tr>{{end}}</tbody>
</table>
</div>

<h2>Agents</h2>
<div class="scroll">
<table id="agents">
<thead><tr><th>#</th><th>Agent</th><th>State</th><th>Wave</th><th>Status</th><th>Start</th><th>Took</th><th>Tokens</th><th class="hide-narrow">Input</th><th class="hide-narrow">Output</th><th class="hide-narrow">Cache read</th><th class="hide-narrow">Cache write</th>{{if .Money}}<th>Cost</th>{{end}}<th class="hide-narrow">Model</th><th class="hide-narrow">Requests</th><th class="hide-narrow">Tools</th><th>Artifact</th></tr></thead>
<tbody>{{range .Agents}}<tr id="agent-{{.N}}" class="{{.Class}}"><td class="n">{{.N}}</td><td>{{.Type}}{{if .Worker}} <code>{{.Worker}}</code>{{end}}{{if .Attempt}} (attempt {{.Attempt}}){{end}}</td><td>{{.State}}{{if .Rewound}} (rewound){{end}}</td><td class="n">{{.Wave}}</td><td class="st-{{.Status}}">{{.Status}}{{if .Error}}: {{.Error}}{{end}}</td><td class="n">{{.Start}}</td><td class="n">{{.Took}}</td><td class="n">{{.Total}}</td><td class="n hide-narrow">{{.Input}}</td><td class="n hide-narrow">{{.Output}}</td><td class="n hide-narrow">{{.CacheRead}}</td><td class="n hide-narrow">{{.CacheWrite}}</td>{{if $.Money}}<td class="n">{{.Money}}</td>{{end}}<td class="hide-narrow">{{.Model}}</td><td class="n hide-narrow">{{.Requests}}</td><td class="n hide-narrow">{{.ToolUses}}</td><td>{{if .Link}}<a class="artifact" href="{{.Link}}"><code>{{.Artifact}}</code></a>{{else if .Artifact}}<code>{{.Artifact}}</code>{{end}}</td></tr>{{end}}</tbody>
</table>
</div>

{{if .Main}}<h2>Main thread</h2>
<div class="scroll">
<table id="main-thread">
<thead><tr><th>State</th><th>Model</th><th>Tokens</th><th>Input</th><th>Output</th><th>Cache read</th><th>Cache write</th><th>Requests</th>{{if .Money}}<th>Cost</th>{{end}}</tr></thead>
<tbody>{{range .Main}}<tr><td>{{.State}}</td><td>{{.Model}}</td><td class="n">{{.Total}}</td><td class="n">{{.Input}}</td><td class="n">{{.Output}}</td><td class="n">{{.CacheRead}}</td><td class="n">{{.CacheWrite}}</td><td class="n">{{.Requests}}</td>{{if $.Money}}<td class="n">{{.Money}}</td>{{end}}</tr>{{end}}</tbody>
</table>
</div>{{end}}

<footer>Written by flowstate {{.Version}} at {{.Generated}} from the workflow's events.jsonl and checkpoint. Tokens are Claude Code's usage as the hooks recorded it; work a rewind took back is still counted.</footer>
</body>
</html>
`
