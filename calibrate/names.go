package calibrate

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// PerfMon names its objects and counters in the language of the Windows
// that records them: a German server logs \Prozessor(_Total)\Prozessorzeit
// (%) where an English one logs \Processor(_Total)\% Processor Time.
// Calibrate reads a capture by the English names; localName turns what the
// capture says into them, from the table below and from a names file the
// user gives (--names, written on the capturing machine from its registry:
// docs/field-calibrate.md has the command).
//
// The table holds the processor's names, the only ones calibrate needs
// that Windows itself translates, in the languages where Microsoft's
// localized documentation quotes them (Azure Monitor, Azure Virtual
// Desktop, Windows Server and typeperf pages of learn.microsoft.com in
// de-de, fr-fr, es-es, it-it, pt-br, ru-ru and zh-cn), each cross-checked
// against public scripts that read the counter with Get-Counter or
// typeperf on a Windows in that language. .NET Framework's own objects —
// ASP.NET, ASP.NET Applications and ServiceModelService, versioned or not
// — keep their English names in Microsoft's documentation of every
// language it was checked in (zh-cn and zh-tw quote "Requests/Sec" and
// "Requests Queued" in English, with a gloss); a .NET language pack that
// does translate them is read through a names file.

// language is one language's names of the objects and counters calibrate
// reads, the localized name first.
type language struct {
	name     string
	objects  [][2]string // {localized, English}
	counters [][2]string
}

// languages is the built-in table (docs/field-calibrate.md prints it).
var languages = []language{
	{"German", [][2]string{{"Prozessor", objProcessor}, {"Prozessorinformationen", objProcessorInfo}}, [][2]string{{"Prozessorzeit (%)", cProcessor}}},
	{"French", [][2]string{{"Processeur", objProcessor}, {"Informations sur le processeur", objProcessorInfo}}, [][2]string{{"% temps processeur", cProcessor}}},
	{"Spanish", [][2]string{{"Procesador", objProcessor}, {"Información del procesador", objProcessorInfo}}, [][2]string{{"% de tiempo de procesador", cProcessor}}},
	{"Italian", [][2]string{{"Processore", objProcessor}, {"Informazioni processore", objProcessorInfo}, {"Informazioni sul processore", objProcessorInfo}}, [][2]string{{"% tempo processore", cProcessor}}},
	{"Portuguese (Brazil)", [][2]string{{"Processador", objProcessor}}, [][2]string{{"% tempo de processador", cProcessor}}},
	{"Russian", [][2]string{{"Процессор", objProcessor}, {"Сведения о процессоре", objProcessorInfo}}, [][2]string{{"% загруженности процессора", cProcessor}}},
	{"Chinese (Simplified)", [][2]string{{"处理器", objProcessor}}, [][2]string{{"% 处理器时间", cProcessor}}},
}

// names maps localized names (folded: lower case, spaces collapsed) to
// English ones, and records which language each came from.
type names struct {
	objects, counters map[string]nameOf
}

type nameOf struct {
	english, language string
}

// fold is the key a name is compared by: PerfMon's names are compared
// without regard to case, and relog keeps a name's spaces as registered.
func fold(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// builtinNames is the table as a lookup.
func builtinNames() *names {
	n := &names{objects: map[string]nameOf{}, counters: map[string]nameOf{}}
	for _, l := range languages {
		for _, p := range l.objects {
			n.objects[fold(p[0])] = nameOf{p[1], l.name}
		}
		for _, p := range l.counters {
			n.counters[fold(p[0])] = nameOf{p[1], l.name}
		}
	}
	return n
}

// MaxNamesBytes bounds a names file: the English and localized names of
// every counter of a Windows server are about 1 MB.
const MaxNamesBytes = 4 << 20

// ParseNames reads a names file: one name a line, "ENGLISH<TAB>LOCALIZED",
// or "INDEX<TAB>ENGLISH<TAB>LOCALIZED" as the PowerShell command of
// docs/field-calibrate.md writes it from the registry (Perflib\009 and
// Perflib\CurrentLanguage pair names by index). Blank lines and lines
// starting with # are skipped. The names add to the built-in table and
// take precedence over it; they are matched to objects and counters
// alike. file names it in messages.
func ParseNames(data []byte, file string) (map[string]string, error) {
	text, _, err := decodeText(data, file)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(s) == "" || strings.HasPrefix(s, "#") {
			continue
		}
		f := strings.Split(s, "\t")
		if len(f) == 3 {
			if _, err := strconv.ParseUint(strings.TrimSpace(f[0]), 10, 32); err != nil {
				return nil, fmt.Errorf("%s:%d:1: the first of three fields is not a counter index (a number); a line is ENGLISH<TAB>LOCALIZED or INDEX<TAB>ENGLISH<TAB>LOCALIZED", file, line)
			}
			f = f[1:]
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d:1: %d tab-separated fields; a line is ENGLISH<TAB>LOCALIZED or INDEX<TAB>ENGLISH<TAB>LOCALIZED", file, line, len(f))
		}
		en, lo := strings.TrimSpace(f[0]), strings.TrimSpace(f[1])
		if en == "" || lo == "" {
			return nil, fmt.Errorf("%s:%d:1: an empty name; a line is ENGLISH<TAB>LOCALIZED", file, line)
		}
		out[fold(lo)] = en
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: a line longer than 64 KiB; a names file has one counter name a line", file, line+1)
	}
	return out, nil
}

// with adds a names file's names to n (a copy).
func (n *names) with(user map[string]string) *names {
	if len(user) == 0 {
		return n
	}
	c := &names{objects: map[string]nameOf{}, counters: map[string]nameOf{}}
	for k, v := range n.objects {
		c.objects[k] = v
	}
	for k, v := range n.counters {
		c.counters[k] = v
	}
	for k, v := range user {
		c.objects[k] = nameOf{v, "the names file"}
		c.counters[k] = nameOf{v, "the names file"}
	}
	return c
}

// object is the English name of a capture's object, and the language it
// was in ("" for English).
func (n *names) object(s string) (string, string) {
	if v, ok := n.objects[fold(s)]; ok {
		return v.english, v.language
	}
	return s, ""
}

// counter is the English name of a capture's counter, and its language.
func (n *names) counter(s string) (string, string) {
	if v, ok := n.counters[fold(s)]; ok {
		return v.english, v.language
	}
	return s, ""
}
