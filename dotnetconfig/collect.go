package dotnetconfig

import (
	"fmt"
	"strings"
)

// This file walks the parsed files and collects the elements the
// resolution reads, merged across the configuration hierarchy as
// System.Configuration merges them: a section's attributes per attribute
// (a later file overrides only what it sets), collections by key with
// <add>, <remove> and <clear/>. Everything else is walked only to find
// entries that have no effect where they are.

// pos is a place in a file.
type pos struct {
	file string
	line int
}

func (p pos) String() string { return fmt.Sprintf("%s:%d", p.file, p.line) }

// An attr is an attribute's effective value and where it was set.
type attr struct {
	value string
	at    pos
}

// A section is one merged configuration element (processModel,
// httpRuntime, ...): each attribute as the last file that set it says.
type section struct {
	attrs map[string]attr
	at    pos // the last element that contributed; zero if none
}

func (s *section) get(name string) (attr, bool) {
	if s == nil {
		return attr{}, false
	}
	a, ok := s.attrs[name]
	return a, ok
}

// A connEntry is one <add address maxconnection> that took effect.
type connEntry struct {
	address string
	max     int
	maxSet  bool // false: maxconnection absent, the element's default of 1
	at      pos
}

// A named element of a WCF collection (a binding configuration, a
// behaviour, a service), as the last file that defined it wrote it.
type named struct {
	name string
	el   *Element
	at   pos
	used bool
}

// An endpoint is a client endpoint.
type endpoint struct {
	name, address, binding, bindingConfig, contract string
	hasBinding                                      bool
	at                                              pos
}

// collected is everything the walk found.
type collected struct {
	conn        []connEntry // in effect, in order
	connSeen    bool        // some file had a connectionManagement section
	processMdl  *section
	httpRt      *section
	compile     *section
	appPool     *section
	machine     bool   // a machine.config was given
	machineName string // its name
	webFiles    int
	appFiles    int

	bindings  map[string][]*named // binding type → configurations, in definition order
	behaviors []*named            // service behaviours
	services  []*named
	client    []*endpoint

	// The collections while the files are merged (keyed.go); the slices
	// above are filled from them once every file is walked.
	connK      keyed[connEntry]
	bindingsK  map[string]*keyed[*named]
	bindingTyp []string // binding types in the order first met
	behaviorsK keyed[*named]
	servicesK  keyed[*named]
	clientK    keyed[*endpoint]

	warnings []Warning
	errs     []error
}

// A Warning is an entry that has no effect, or a setting tsim does not
// model, at a place in a file (Line 0: not at a line).
type Warning struct {
	File string
	Line int
	Msg  string
}

func (w Warning) String() string {
	if w.File == "" {
		return w.Msg
	}
	if w.Line == 0 {
		return w.File + ": " + w.Msg
	}
	return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Msg)
}

func (c *collected) warn(at pos, format string, args ...any) {
	c.warnings = append(c.warnings, Warning{File: at.file, Line: at.line, Msg: fmt.Sprintf(format, args...)})
}

func (c *collected) errorf(at pos, format string, args ...any) {
	c.errs = append(c.errs, &ConfigError{File: at.file, Line: at.line, Msg: fmt.Sprintf(format, args...)})
}

// walker walks one file.
type walker struct {
	c    *collected
	f    File
	seen map[string]pos // sections met in this file: each may appear once
}

func (w *walker) at(e *Element) pos { return pos{w.f.Name, e.Line} }

// homes are the places of the elements the resolution reads. An element
// with one of these names found anywhere else has no effect there.
var homes = map[string]string{
	"system.net":           "system.net",
	"connectionManagement": "system.net/connectionManagement",
	"system.web":           "system.web",
	"processModel":         "system.web/processModel",
	"httpRuntime":          "system.web/httpRuntime",
	"compilation":          "system.web/compilation",
	"applicationPool":      "system.web/applicationPool",
	"system.serviceModel":  "system.serviceModel",
	"serviceThrottling":    "system.serviceModel/behaviors/serviceBehaviors/behavior/serviceThrottling",
}

// homeName returns the name in homes that s is, ignoring case.
func homeName(s string) (string, bool) {
	for n := range homes {
		if strings.EqualFold(n, s) {
			return n, true
		}
	}
	return "", false
}

// collect walks the files in hierarchy order.
func collect(files []File) (*collected, error) {
	c := &collected{bindings: map[string][]*named{}, bindingsK: map[string]*keyed[*named]{}}
	for _, f := range files {
		root, err := Parse(f.Name, f.Data)
		if err != nil {
			return nil, err
		}
		switch f.Kind {
		case KindMachine:
			c.machine, c.machineName = true, f.Name
		case KindWeb:
			c.webFiles++
		case KindApp:
			c.appFiles++
		}
		w := &walker{c: c, f: f, seen: map[string]pos{}}
		w.children(root, nil, nil)
	}
	c.conn = c.connK.list()
	for _, t := range c.bindingTyp {
		c.bindings[t] = c.bindingsK[t].list()
	}
	c.behaviors = c.behaviorsK.list()
	c.services = c.servicesK.list()
	c.client = c.clientK.list()
	return c, nil
}

// children visits el's children; path is el's path below <configuration>
// and labels the same path for messages.
func (w *walker) children(el *Element, path, labels []string) {
	for _, ch := range el.Children {
		w.visit(ch, append(path[:len(path):len(path)], ch.Name), append(labels[:len(labels):len(labels)], label(ch)))
	}
}

// label names an element in a message: its name, and its name attribute
// if it has one (configSections' sectionGroup "system.net" and section
// "connectionManagement", a binding's configuration name).
func label(el *Element) string {
	if n, ok := el.Attr("name"); ok {
		return fmt.Sprintf("%s name=%q", el.Name, clip(n))
	}
	return el.Name
}

func (w *walker) visit(el *Element, path, labels []string) {
	p := strings.Join(path, "/")
	switch p {
	case "location":
		w.location(el)
		return
	case "system.net/connectionManagement":
		if w.once(el, p) && w.inHierarchy(el, p) {
			w.connectionManagement(el)
		}
		return
	case "system.web/processModel", "system.web/httpRuntime", "system.web/compilation", "system.web/applicationPool":
		if w.once(el, p) {
			w.section(el, p)
		}
		return
	case "system.serviceModel/behaviors/serviceBehaviors", "system.serviceModel/behaviors/endpointBehaviors",
		"system.serviceModel/services", "system.serviceModel/client", "system.serviceModel/bindings":
		if !w.once(el, p) || !w.inHierarchy(el, p) {
			return
		}
		w.configSource(el, p)
		switch p {
		case "system.serviceModel/behaviors/serviceBehaviors":
			w.collection(el, p, &w.c.behaviorsK, "behavior", "name")
		case "system.serviceModel/services":
			w.collection(el, p, &w.c.servicesK, "service", "name")
		case "system.serviceModel/client":
			w.clientEndpoints(el)
		case "system.serviceModel/bindings":
			for _, ch := range el.Children {
				list := w.c.bindingsK[ch.Name]
				if list == nil {
					list = &keyed[*named]{}
					w.c.bindingsK[ch.Name] = list
					w.c.bindingTyp = append(w.c.bindingTyp, ch.Name)
				}
				w.collection(ch, p+"/"+ch.Name, list, "binding", "name")
			}
		default: // endpointBehaviors: only look for misplaced throttles
			w.children(el, path, labels)
		}
		return
	}
	w.misplaced(el, path, labels)
	w.children(el, path, labels)
}

// once reports whether el is the first section at p in this file; .NET
// refuses a file with a section twice.
func (w *walker) once(el *Element, p string) bool {
	if prev, ok := w.seen[p]; ok {
		w.c.errorf(w.at(el), "<%s> appears a second time in this file (first at line %d); .NET refuses such a file", el.Name, prev.line)
		return false
	}
	w.seen[p] = w.at(el)
	return true
}

// inHierarchy reports whether the section at p is read from this file:
// Aspnet.config holds only the application-pool settings.
func (w *walker) inHierarchy(el *Element, p string) bool {
	if w.f.Kind == KindAspnet {
		w.c.warn(w.at(el), "<%s> has no effect: Aspnet.config is not part of an application's configuration (only applicationPool is read from it)", p)
		return false
	}
	return true
}

func (w *walker) configSource(el *Element, p string) {
	if _, ok := el.Attr("configSource"); ok {
		w.c.warn(w.at(el), "<%s> takes its settings from a configSource file, which tsim config does not read; paste that file's element here to include it", p)
	}
}

// location applies <location> with no path (or ".") like its contents
// written in place; a <location> for a sub-path or another site is ignored.
func (w *walker) location(el *Element) {
	p, ok := el.Attr("path")
	p = strings.TrimSpace(p)
	if ok && p != "" && p != "." {
		w.c.warn(w.at(el), "<location path=%q> ignored: it applies to part of a site only; tsim config reads the settings of the application's root", clip(p))
		return
	}
	w.children(el, nil, nil)
}

// misplaced warns about an element with the name of one the resolution
// reads, found where .NET does not read it.
func (w *walker) misplaced(el *Element, path, labels []string) {
	p := strings.Join(path, "/")
	where := describe(labels[:len(labels)-1])
	if el.Name == "add" {
		if _, ok := attrFold(el, "maxconnection"); ok {
			addr, _ := el.Attr("address")
			mc, _ := attrFold(el, "maxconnection")
			w.c.warn(w.at(el), "<add address=%q maxconnection=%q> ignored: not inside system.net/connectionManagement (it is in %s%s)",
				clip(addr), clip(mc), where, whyThere(path))
			return
		}
	}
	name, ok := homeName(el.Name)
	if !ok {
		return
	}
	home := homes[name]
	switch {
	case p == home:
		return
	case strings.EqualFold(p, home):
		w.c.warn(w.at(el), "<%s> ignored: element names are case-sensitive; .NET reads <%s> (and refuses an unrecognized element)", el.Name, home)
	case name != el.Name:
		// e.g. <connectionmanagement> somewhere odd: mention both problems.
		w.c.warn(w.at(el), "<%s> ignored: not at %s (it is in %s), and names are case-sensitive", el.Name, home, where)
	default:
		w.c.warn(w.at(el), "<%s> ignored: not at %s (it is in %s%s)", el.Name, home, where, whyThere(path))
	}
}

// describe writes an element path for a message from its labels, e.g.
// <configSections/sectionGroup name="system.net"/section name="connectionManagement">.
func describe(path []string) string {
	if len(path) == 0 {
		return "<configuration> itself"
	}
	return "<" + strings.Join(path, "/") + ">"
}

// whyThere adds a word on places people put things by mistake.
func whyThere(path []string) string {
	if len(path) > 0 && path[0] == "configSections" {
		return ", where section handlers are declared, not settings"
	}
	return ""
}

// attrFold finds an attribute ignoring case.
func attrFold(el *Element, name string) (string, bool) {
	for _, a := range el.Attrs {
		if strings.EqualFold(a.Name, name) {
			return a.Value, true
		}
	}
	return "", false
}

// caseSlips warns about attributes that are the wanted names in another
// case: .NET matches attribute names exactly and refuses unknown ones.
func (w *walker) caseSlips(el *Element, names ...string) {
	for _, a := range el.Attrs {
		for _, n := range names {
			if a.Name != n && strings.EqualFold(a.Name, n) {
				w.c.warn(w.at(el), "<%s %s=...> ignored: attribute names are case-sensitive; .NET reads %s (and refuses an unrecognized attribute)", el.Name, a.Name, n)
			}
		}
	}
}

// section merges a section's attributes into the hierarchy.
func (w *walker) section(el *Element, p string) {
	c := w.c
	w.configSource(el, p)
	var dst **section
	switch p {
	case "system.web/processModel":
		if w.f.Kind != KindMachine {
			c.warn(w.at(el), "<processModel> has no effect outside machine.config (allowDefinition=MachineOnly; ASP.NET reports a configuration error)")
			return
		}
		dst = &c.processMdl
		w.caseSlips(el, "autoConfig", "maxWorkerThreads", "maxIoThreads", "minWorkerThreads", "minIoThreads", "requestQueueLimit", "clientConnectedCheck")
	case "system.web/applicationPool":
		if w.f.Kind != KindAspnet {
			c.warn(w.at(el), "<applicationPool> has no effect outside Aspnet.config (the CLR host of the application pool reads it from there)")
			return
		}
		dst = &c.appPool
		w.caseSlips(el, "maxConcurrentRequestsPerCPU", "maxConcurrentThreadsPerCPU", "requestQueueLimit")
	default:
		if !w.inHierarchy(el, p) {
			return
		}
		if p == "system.web/httpRuntime" {
			dst = &c.httpRt
			w.caseSlips(el, "minFreeThreads", "minLocalRequestFreeThreads", "appRequestQueueLimit", "executionTimeout")
		} else {
			dst = &c.compile
			w.caseSlips(el, "debug")
		}
	}
	if *dst == nil {
		*dst = &section{attrs: map[string]attr{}}
	}
	s := *dst
	s.at = w.at(el)
	for _, a := range el.Attrs {
		s.attrs[a.Name] = attr{value: a.Value, at: w.at(el)}
	}
}

// connectionManagement applies <add>, <remove> and <clear/> in order.
func (w *walker) connectionManagement(el *Element) {
	c := w.c
	c.connSeen = true
	w.configSource(el, "system.net/connectionManagement")
	inFile := map[string]int{} // address → line added in this element
	var dups repeated
	for _, ch := range el.Children {
		at := w.at(ch)
		switch ch.Name {
		case "add":
			w.caseSlips(ch, "address", "maxconnection")
			addr, ok := ch.Attr("address")
			if !ok {
				c.errorf(at, "<connectionManagement><add> without an address attribute; .NET refuses it")
				continue
			}
			if l, dup := inFile[addr]; dup {
				dups.note(at, fmt.Sprintf("<add address=%q> a second time in this connectionManagement (first at line %d); .NET refuses it", clip(addr), l))
				continue
			}
			inFile[addr] = ch.Line
			e := connEntry{address: addr, max: 1, at: at}
			if v, ok := ch.Attr("maxconnection"); ok {
				n, err := parseInt(v)
				if err != nil {
					c.errorf(at, "<add address=%q> maxconnection: %v", clip(addr), err)
					continue
				}
				e.max, e.maxSet = n, true
			}
			c.connK.add(addr, e)
		case "remove":
			addr, ok := ch.Attr("address")
			if !ok {
				c.errorf(at, "<connectionManagement><remove> without an address attribute; .NET refuses it")
				continue
			}
			if !c.connK.remove(addr) {
				c.warn(at, "<remove address=%q> has no effect: no earlier entry has that address", clip(addr))
			}
		case "clear":
			if c.connK.len() == 0 {
				c.warn(at, "<clear/> has no effect: no earlier connectionManagement entries")
			}
			c.connK.clear()
		default:
			c.warn(at, "<%s> ignored: connectionManagement takes only <add>, <remove> and <clear/> (.NET refuses an unrecognized element)", clip(ch.Name))
		}
	}
	dups.report(c, "repeated addresses in this connectionManagement")
}

// repeated gathers one kind of error found many times in an element: the
// first is reported whole, the others counted, so that a file of 20,000
// repeated entries makes one line, not 20,000.
type repeated struct {
	at    pos
	msg   string
	count int
	last  int // line of the last one
}

func (r *repeated) note(at pos, msg string) {
	if r.count == 0 {
		r.at, r.msg = at, msg
	}
	r.count++
	r.last = at.line
}

func (r *repeated) report(c *collected, what string) {
	switch {
	case r.count == 0:
	case r.count == 1:
		c.errorf(r.at, "%s", r.msg)
	default:
		c.errorf(r.at, "%s; and %d more %s, the last at line %d", r.msg, r.count-1, what, r.last)
	}
}

// collection applies a WCF keyed collection (<binding>, <behavior>,
// <service>) with <remove> and <clear/>: a later file's element with the
// same key replaces the earlier one.
func (w *walker) collection(el *Element, p string, list *keyed[*named], item, key string) {
	inFile := map[string]int{}
	var dups repeated
	for _, ch := range el.Children {
		at := w.at(ch)
		switch ch.Name {
		case item:
			name, _ := ch.Attr(key)
			if l, dup := inFile[name]; dup {
				dups.note(at, fmt.Sprintf("<%s %s=%q> a second time in <%s> (first at line %d); .NET refuses it", item, key, clip(name), p, l))
				continue
			}
			inFile[name] = ch.Line
			list.add(name, &named{name: name, el: ch, at: at})
			if item == "behavior" {
				w.behaviorChildren(ch)
			}
		case "remove":
			name, _ := ch.Attr(key)
			list.remove(name)
		case "clear":
			list.clear()
		default:
			path := append(strings.Split(p, "/"), ch.Name)
			w.misplaced(ch, path, path)
		}
	}
	dups.report(w.c, "repeated "+item+"s in <"+p+">")
}

// behaviorChildren checks a service behaviour's elements: one
// serviceThrottling at most.
func (w *walker) behaviorChildren(b *Element) {
	var first *Element
	for _, ch := range b.Children {
		if ch.Name == "serviceThrottling" {
			if first != nil {
				w.c.errorf(w.at(ch), "<serviceThrottling> a second time in one behavior (first at line %d); .NET refuses it", first.Line)
				continue
			}
			first = ch
			w.caseSlips(ch, "maxConcurrentCalls", "maxConcurrentSessions", "maxConcurrentInstances")
		} else if strings.EqualFold(ch.Name, "serviceThrottling") {
			w.c.warn(w.at(ch), "<%s> ignored: element names are case-sensitive; .NET reads <serviceThrottling>", ch.Name)
		}
	}
}

// clientEndpoints collects <client><endpoint>s: a later endpoint with the
// same name and contract replaces an earlier one.
func (w *walker) clientEndpoints(el *Element) {
	key := func(name, contract string) string { return name + "\x00" + contract }
	for _, ch := range el.Children {
		switch ch.Name {
		case "endpoint":
			ep := &endpoint{at: w.at(ch)}
			ep.name, _ = ch.Attr("name")
			ep.address, _ = ch.Attr("address")
			ep.binding, ep.hasBinding = ch.Attr("binding")
			ep.bindingConfig, _ = ch.Attr("bindingConfiguration")
			ep.contract, _ = ch.Attr("contract")
			w.c.clientK.add(key(ep.name, ep.contract), ep)
		case "clear":
			w.c.clientK.clear()
		case "remove":
			name, _ := ch.Attr("name")
			contract, _ := ch.Attr("contract")
			w.c.clientK.remove(key(name, contract))
		default:
			path := []string{"system.serviceModel", "client", ch.Name}
			w.misplaced(ch, path, path)
		}
	}
}
