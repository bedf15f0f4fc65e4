package model

// Session is a client proxy's WCF session as its service sees it (a
// sessionful binding: netTcp, wsHttp with a secure session, named pipes):
// the same state in both executors.
type Session struct {
	// Created: its PerSession service instance was created
	// (WCF.InstanceCPU paid).
	Created bool
}
