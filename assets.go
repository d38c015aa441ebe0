// Package flowstate embeds the Claude Code plugin tree (commands, agents,
// hooks) in the binary, so `flowstate install` can put it into any
// project without the repository. It lives at the repository root
// because //go:embed cannot reach parent directories.
package flowstate

import "embed"

// Plugin is the plugin tree, rooted like the repository: commands/*.md,
// agents/*.md, workflows/*.js, hooks/hooks.json, hooks/run-hook.
//
//go:embed commands agents workflows hooks
var Plugin embed.FS
