package dotnetconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tsim-dev/tsim/input"
)

// Kind is what a configuration file is to .NET.
type Kind uint8

const (
	// KindMachine is machine.config: the root of every process's
	// configuration, and the only file processModel is read from.
	KindMachine Kind = iota
	// KindWeb is a web.config: the Framework's root web.config or an
	// application's, applied after machine.config in the order given.
	KindWeb
	// KindApp is an executable's configuration file (NAME.exe.config, or
	// app.config as it is named in a project), applied after machine.config.
	KindApp
	// KindAspnet is Aspnet.config, read by the CLR host of IIS application
	// pools for applicationPool; it is not part of any application's
	// configuration.
	KindAspnet
)

var kindNames = [...]string{"machine", "web", "app", "aspnet"}

func (k Kind) String() string { return kindNames[k] }

// KindNames are the words a KIND=PATH argument accepts.
func KindNames() []string { return append([]string(nil), kindNames[:]...) }

// KindOf tells a file's kind from its name: machine.config, web.config,
// aspnet.config, app.config or NAME.exe.config (any case).
func KindOf(path string) (Kind, bool) {
	base := strings.ToLower(filepath.Base(path))
	switch {
	case base == "machine.config":
		return KindMachine, true
	case base == "web.config":
		return KindWeb, true
	case base == "aspnet.config":
		return KindAspnet, true
	case base == "app.config", strings.HasSuffix(base, ".exe.config"):
		return KindApp, true
	}
	return 0, false
}

// A File is one configuration file to apply.
type File struct {
	Name string // as shown in messages: the path given
	Kind Kind
	Data []byte
}

// ReadArgs turns command-line arguments into files. An argument is a file
// whose kind KindOf knows, KIND=PATH for any other name (machine=old.config,
// web=Web.Release.config), or a directory, which stands for the files in it
// whose kind KindOf knows (machine.config first, then the others by name).
// Each file is read through package input: a regular file only (a FIFO,
// a device or a directory given as KIND=PATH is refused before it is
// opened), of at most MaxFileSize bytes.
func ReadArgs(args []string) ([]File, error) {
	var files []File
	for _, arg := range args {
		if k, p, ok := strings.Cut(arg, "="); ok && !strings.ContainsAny(k, `/\.`) {
			kind, known := kindByName(k)
			if !known {
				return nil, fmt.Errorf("%s: unknown kind %q (kinds: %s)", arg, k, strings.Join(KindNames(), ", "))
			}
			data, err := readFile(p)
			if err != nil {
				return nil, err
			}
			files = append(files, File{Name: p, Kind: kind, Data: data})
			continue
		}
		st, err := os.Stat(arg)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			dir, err := readDir(arg)
			if err != nil {
				return nil, err
			}
			files = append(files, dir...)
			continue
		}
		kind, ok := KindOf(arg)
		if !ok {
			return nil, fmt.Errorf("%s: cannot tell what kind of configuration file this is from its name; name it as machine=%s, web=%s, app=%s or aspnet=%s", arg, arg, arg, arg, arg)
		}
		data, err := readFile(arg)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: arg, Kind: kind, Data: data})
	}
	return files, nil
}

// readFile reads one configuration file: regular, bounded (package input).
func readFile(path string) ([]byte, error) {
	return input.ReadRegular(path, MaxFileSize, "configuration files")
}

func kindByName(s string) (Kind, bool) {
	for i, n := range kindNames {
		if strings.EqualFold(n, s) {
			return Kind(i), true
		}
	}
	return 0, false
}

func readDir(dir string) ([]File, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []File
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		kind, ok := KindOf(e.Name())
		if !ok {
			continue
		}
		p := filepath.Join(dir, e.Name())
		data, err := readFile(p)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: p, Kind: kind, Data: data})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no machine.config, web.config, app.config, *.exe.config or aspnet.config in it", dir)
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Kind < files[j].Kind })
	return files, nil
}

// order returns the files in the order .NET applies them: machine.config,
// then the web.config or app.config files in the order given (the root
// web.config before the application's), and Aspnet.config, which stands
// apart. It refuses combinations no process reads.
func order(files []File) ([]File, error) {
	var machine, aspnet []File
	var web, app []File
	for _, f := range files {
		switch f.Kind {
		case KindMachine:
			machine = append(machine, f)
		case KindWeb:
			web = append(web, f)
		case KindApp:
			app = append(app, f)
		case KindAspnet:
			aspnet = append(aspnet, f)
		}
	}
	if len(machine) > 1 {
		return nil, fmt.Errorf("two machine.config files (%s, %s): a process reads one", machine[0].Name, machine[1].Name)
	}
	if len(aspnet) > 1 {
		return nil, fmt.Errorf("two Aspnet.config files (%s, %s): a process reads one", aspnet[0].Name, aspnet[1].Name)
	}
	if len(web) > 0 && len(app) > 0 {
		return nil, fmt.Errorf("both a web.config (%s) and an executable's configuration (%s): an ASP.NET application reads web.config files, any other process its NAME.exe.config", web[0].Name, app[0].Name)
	}
	if len(app) > 1 {
		return nil, fmt.Errorf("two executable configuration files (%s, %s): a process reads one", app[0].Name, app[1].Name)
	}
	out := append(append(append(machine, web...), app...), aspnet...)
	if len(out) == 0 {
		return nil, fmt.Errorf("no configuration files")
	}
	return out, nil
}
