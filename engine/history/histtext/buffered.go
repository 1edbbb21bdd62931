package histtext

import (
	"bufio"
	"io"

	"github.com/fgtop/fgtop/engine/history"
)

// WriteBuffered is Write through a 64 KiB buffer: a listing is tens of
// thousands of lines, and one write(2) per line was a third of the
// command's time. A write error comes first, then what the listing finds
// amiss, then a failed flush.
func WriteBuffered(w io.Writer, res *history.HistoryResult, f history.Filter, o Options) (problems []string, err error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	problems, err = Write(bw, res, f, o)
	ferr := bw.Flush()
	switch {
	case err != nil:
		return nil, err
	case len(problems) == 0 && ferr != nil:
		return nil, ferr
	}
	return problems, nil
}
