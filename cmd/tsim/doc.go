// Command tsim simulates multi-tier request/reply systems and their
// throttles: it runs experiment files, prints what happened and writes the
// results; "tsim help" lists its commands.
//
// It follows the go command: a command value per subcommand (one file
// each, in the commands list of command.go) with its own flag set, a help
// text per command in help/, exit status 2 for usage errors and 1 for
// failures, messages prefixed "tsim <command>: " and cut to a line of
// maxLine bytes, and main only calling Main, which tests call with
// buffers and a context they cancel. Every command stops within a second
// of the first Ctrl-C or SIGTERM (runSafely).
//
// It is a thin shell over the root package, tsim: a command parses its
// flags, makes one library call (tsim.Run, RunAll, Merge, Explain, Plan,
// Validate, Calibrate, Fit, ReadConfig), prints the result's WriteText
// (through tables(), which fits tables to a terminal) and writes its
// files with the result's WriteFiles into a tsim.Output it opened
// (writeFiles). A new command does the same: its logic in a package of
// its own and a function of the root package, its file here a few dozen
// lines.
package main
