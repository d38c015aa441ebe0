// Package e2e runs the flowstate plugin inside the real Claude Code CLI against
// the local stand-in model (package standin), with no network.
//
// The tests carry the build tag e2e so that a plain `go test ./...` stays fast:
//
//	go test -tags e2e -v ./tests/e2e/
//
// They install @anthropic-ai/claude-code@2.1.328 into tests/e2e/.cache/npm when
// no matching `claude` is on PATH.
package e2e
