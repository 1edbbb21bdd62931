package placement

import (
	"strconv"
	"testing"
)

func TestParseStep(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string // FormatRequest of the request, or "free=N"
		wantErr bool
	}{
		{in: "cuda.shares=0.2", want: "cuda.shares=0.2"},
		{in: "cuda.shares=0.20", want: "cuda.shares=0.20"},
		{in: "cuda.shares=12.0", want: "cuda.shares=12.0"},
		{in: " cuda.shares = 1.2 , cpu=2 , mem=4g ", want: "cuda.shares=1.2,cpu=2,mem=4294967296"},
		{in: "mem=1073741824", want: "mem=1073741824"},
		{in: "mem=1.5g", want: "mem=1610612736"},
		{in: "mem=0.5k", want: "mem=512"},
		// A fraction of a byte is refused, not rounded (plan's --mem too).
		{in: "mem=0.3k", wantErr: true},
		{in: "mem=0.1m", wantErr: true},
		{in: `{"mem": "0.3k"}`, wantErr: true},
		{in: "cpu=2,cuda.shares=1", want: "cpu=2,cuda.shares=1"},
		{in: "cuda.shares=0", want: "cuda.shares=0"},
		{in: "cuda.shares=1e1", want: "cuda.shares=1E+1"},
		{in: "cuda.device:10g-mig=1", want: "cuda.device:10g-mig=1"},
		{in: `{"cuda.shares": "0.015"}`, want: "cuda.shares=0.015"},
		{in: `{"cuda.shares": 1.20, "cpu": "2"}`, want: "cuda.shares=1.20,cpu=2"},
		{in: "", want: ""},
		{in: "free=1", want: "free=1"},
		{in: "free=k12", want: "free=12"},
		{in: "FREE = 3", want: "free=3"},
		{in: "free=0", wantErr: true},
		{in: "free=-1", wantErr: true},
		{in: "free=01", wantErr: true},
		{in: "free=x", wantErr: true},
		{in: "cuda.shares", wantErr: true},
		{in: "=1", wantErr: true},
		{in: "cuda.shares=", wantErr: true},
		{in: "cuda.shares=abc", wantErr: true},
		{in: "cuda.shares=NaN", wantErr: true},
		{in: "cuda.shares=Infinity", wantErr: true},
		{in: "mem=lots", wantErr: true},
		{in: "cpu=1,cpu=2", wantErr: true},
		{in: `{"cuda.shares": [1]}`, wantErr: true},
		{in: `{"cuda.shares": "1"} x`, wantErr: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			st, err := ParseStep(tc.in, nil)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %+v, want an error", st)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := FormatRequest(st.Request)
			if st.IsFree() {
				got = "free=" + strconv.Itoa(st.Free)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if st.Text != tc.in {
				t.Errorf("Text %q, want the input", st.Text)
			}
		})
	}
}

func TestValidateSteps(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []string
		ok    bool
	}{
		{"free after its request", []string{"cuda.shares=1", "free=1"}, true},
		{"free counts allocation requests only", []string{"cuda.shares=1", "free=1", "cuda.shares=1", "free=2"}, true},
		{"free before any request", []string{"free=1", "cuda.shares=1"}, false},
		{"free of the step number", []string{"cuda.shares=1", "free=1", "free=3"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var steps []Step
			for _, s := range tc.steps {
				st, err := ParseStep(s, nil)
				if err != nil {
					t.Fatal(err)
				}
				steps = append(steps, st)
			}
			if err := ValidateSteps(steps); (err == nil) != tc.ok {
				t.Errorf("ValidateSteps: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
