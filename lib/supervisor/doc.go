// Package supervisor owns hierarchical supervision (docs/supervisors.md)
// and plan waves: report metadata, worker records and their upsert into a
// checkpoint's workers array, aggregation per kind with partial failures,
// the flat-or-hierarchical thresholds, phase dependency waves, and
// completion signals in agent output.
//
// Every file but workflow.go is pure: it takes bytes or values and returns
// values, so its rules are table-tested. workflow.go is the I/O at the
// edge: it reads and upserts a stored workflow's worker records under the
// workflow lock and reads what aggregation needs from disk. The package
// prints nothing and parses no flags. Errors carry lib/fail exit codes
// (Invalid for bad data, Usage for bad flags, Refused when every worker
// failed).
package supervisor
