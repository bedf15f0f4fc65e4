// Package input reads an experiment file and the files it names from disk,
// for the command line, so that opening a shared experiment cannot read
// or print arbitrary files nor exhaust memory:
//
//   - only regular files are read: /dev/zero, FIFOs, devices, sockets and
//     directories are refused by their mode before any byte is read (and
//     opened non-blocking, so a FIFO swapped in cannot hang the open);
//   - every read is bounded (io.LimitReader), so a file that grows while
//     it is read cannot pass its limit: an experiment file
//     format.MaxExperimentBytes, a file it names format.MaxDataBytes, all
//     the files it names together format.MaxTotalBytes;
//   - a path an experiment names (empirical(FILE), topology = "x.toml") is
//     relative to the experiment's folder and must stay inside it: no
//     absolute path, no "..", no symbolic link that leads out (checked on
//     the resolved path, and opened through an os.Root so that a link
//     changed meanwhile cannot lead out either), unless
//     Options.AllowOutside;
//   - errors name the path and what is allowed, never the file's content.
//
// Package input imports format for the limits. format itself reads no
// file; it gets the ReadFile this package returns.
package input
