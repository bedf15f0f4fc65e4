package realmode

import (
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"syscall"
	"time"
)

// watchConns samples, every 100 ms until the function it returns is
// called, the TCP connections established to the listener at addr, as the
// kernel counts them (the server's side, through sock_diag: what ss -t
// state established lists), and returns the most seen in five samples in
// a row (half a second; see sampleEvery), -1 if the kernel cannot be asked. (A dump costs 2–5 ms on this VM,
// so it is not sampled more often; connections are kept alive, so a limit
// broken is broken for long.)
func watchConns(addr string) func() int {
	_, p, _ := net.SplitHostPort(addr)
	port, err := strconv.Atoi(p)
	if err != nil {
		panic(addr)
	}
	return sampleEvery(100*time.Millisecond, 5, func() int {
		n, err := established(port)
		if err != nil {
			return -1
		}
		return n
	})
}

// established counts the IPv4 TCP sockets in state ESTABLISHED whose local
// port is port, with one SOCK_DIAG_BY_FAMILY dump.
func established(port int) (int, error) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, syscall.NETLINK_INET_DIAG)
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	const sockDiagByFamily = 20
	const tcpEstablished = 1
	// nlmsghdr (16 bytes), then inet_diag_req_v2 (56): family, protocol,
	// ext, pad, states, and an inet_diag_sockid left zero (no filter).
	req := make([]byte, 16+56)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], sockDiagByFamily)
	binary.NativeEndian.PutUint16(req[6:], syscall.NLM_F_REQUEST|syscall.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], 1)
	req[16], req[17] = syscall.AF_INET, syscall.IPPROTO_TCP
	binary.NativeEndian.PutUint32(req[20:], 1<<tcpEstablished)
	if err := syscall.Sendto(fd, req, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return 0, err
	}
	buf := make([]byte, 1<<16)
	n := 0
	for {
		k, _, err := syscall.Recvfrom(fd, buf, 0)
		if err != nil {
			return 0, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:k])
		if err != nil {
			return 0, err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case syscall.NLMSG_DONE:
				return n, nil
			case syscall.NLMSG_ERROR:
				return 0, errors.New("sock_diag: netlink error")
			}
			// inet_diag_msg: family, state, timer, retrans, then the
			// socket id, whose source port comes first, big-endian.
			if len(m.Data) >= 6 && m.Data[1] == tcpEstablished && int(binary.BigEndian.Uint16(m.Data[4:])) == port {
				n++
			}
		}
	}
}
