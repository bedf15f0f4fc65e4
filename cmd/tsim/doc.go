// Command tsim simulates multi-tier request/reply systems and their
// throttles: it runs experiment files, prints what happened and writes the
// results as JSON, CSV and PNG files.
//
//	tsim run FILE... [-o DIR] [--seed N] [--reps N] [--mode sim|real] [--shard i/n] [--outputs LIST] [--json] [--quiet]
//	tsim explain FILE [-o DIR] [--seed N] [--quiet]
//	tsim plan FILE --goal GOAL (--vary KEY=LO..HI... | --find users|rate) [--users N | --rate R] [...]
//	tsim merge [-o DIR] [--json] [--quiet] SHARDDIR...
//	tsim check FILE...
//	tsim config [--dotnet V] [--cores N] FILE...
//	tsim validate FILE... [--tolerance LIST] [--time-scale S]
//	tsim bench [--json] [--model NAME] [--runs N]
//	tsim help [command]
//	tsim version
//
// The command line follows the go command: a command value per subcommand
// (one file each) with its own flag set, one help text per command, exit
// status 2 for usage errors and 1 for failures, and every message prefixed
// "tsim <command>: ". main only calls Main, which tests call directly with
// buffers and a context they can cancel.
//
// This package is a thin shell over the library: it parses flags, calls
// the packages below (runner for runs, shards and merge; analysis for
// explain and plan; report for the files and tables; realmode for
// validate; dotnetconfig for config), prints, and turns a panic into exit
// status 1. The help texts are in help/, one per command.
package main
