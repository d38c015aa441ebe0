// Package supervisor owns the pure logic of hierarchical supervision
// (docs/supervisors.md) and of plan waves: report metadata, worker records and their
// upsert into a checkpoint's workers array, aggregation per kind with partial
// failures, the flat-or-hierarchical thresholds, phase dependency waves, and
// completion signals in agent output.
//
// It must not do I/O: every function takes bytes or values and returns values.
// lib/workers and lib/orchestrate read files and hold the workflow lock, and
// lib/app prints; this package only decides. Errors carry lib/fail exit codes
// (Invalid for bad data, Usage for bad flags, Refused when every worker
// failed).
package supervisor
