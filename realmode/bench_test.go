package realmode

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkLoopbackCall measures the real executor's per-hop HTTP cost:
// one POST on a kept-alive loopback connection to a handler that replies
// with one byte, as tiers do.
func BenchmarkLoopbackCall(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1")
		_, _ = w.Write(replyBody)
	}))
	defer srv.Close()
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for b.Loop() {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkTimerOvershoot measures how late a 5 ms timer fires, on 8
// goroutines at once (ns/op is the mean overshoot, not the sleep).
func BenchmarkTimerOvershoot(b *testing.B) {
	const d = 5 * time.Millisecond
	b.SetParallelism(4) // 4 × GOMAXPROCS goroutines
	var total, n int64
	done := make(chan [2]int64, 64)
	b.RunParallel(func(pb *testing.PB) {
		var t, k int64
		for pb.Next() {
			t0 := time.Now()
			time.Sleep(d)
			t += int64(time.Since(t0) - d)
			k++
		}
		done <- [2]int64{t, k}
	})
	close(done)
	for x := range done {
		total += x[0]
		n += x[1]
	}
	b.ReportMetric(float64(total)/float64(n)/1e3, "µs-overshoot")
}
