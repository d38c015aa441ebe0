// Package standin is a local stand-in for the Anthropic Messages API that plays
// the model for Claude Code deterministically, so that end-to-end tests can run
// the real CLI with no network.
//
// The stand-in is a literal-minded model: it follows the command protocol
// (docs/command-protocol.md) of the program it is given — the expanded slash
// command in the main thread, the agent body plus prompt in a subagent — step by
// step, and never looks at the files the steps produce to decide what to do.
// Everything it answers is a function of the conversation in the request plus
// the Knobs of the scenario; see README.md for the phrases it recognises.
package standin
