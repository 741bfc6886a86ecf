package tool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/search"
	"github.com/reinsdev/reins/internal/wsfs"
)

const (
	// readDefaultLimit is how many lines read returns when not told.
	readDefaultLimit = 2000
	// readMaxLineLen cuts very long lines (minified files) so one line
	// cannot fill the whole output cap.
	readMaxLineLen = 2000
)

type readTool struct{}

var readSpec = lazy.Value[llm.ToolSpec]{New: func() llm.ToolSpec {
	return spec("read",
		"Read a text file, or look at an image. Lines are numbered like `cat -n`. offset is the 1-based first line to show, limit the number of lines (default 2000). A PNG, JPEG, GIF or WebP file (up to 3.75 MB) is shown to you as an image. Other binary files are refused.",
		[]string{"path"},
		pathProperty,
		`"offset": {"type": "integer", "minimum": 1, "description": "1-based line number to start at (default 1)."}`,
		`"limit": {"type": "integer", "minimum": 1, "description": "Number of lines to read (default 2000)."}`)
}}

func (readTool) Spec() llm.ToolSpec { return readSpec.Get() }

func (readTool) Needs() Permission { return ReadOnly }
func (readTool) Traceless()        {}

type readArgs struct {
	Path   *string `json:"path"`
	Offset *int    `json:"offset"`
	Limit  *int    `json:"limit"`
}

func (readTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a readArgs
	if err := decodeArgs(raw, &a, need{"path", &a.Path}); err != nil {
		return Errorf("%v", err)
	}
	offset, limit := 1, readDefaultLimit
	if a.Offset != nil {
		if *a.Offset < 1 {
			return Errorf("offset must be 1 or more, got %d", *a.Offset)
		}
		offset = *a.Offset
	}
	if a.Limit != nil {
		if *a.Limit < 1 {
			return Errorf("limit must be 1 or more, got %d", *a.Limit)
		}
		limit = *a.Limit
	}
	abs, fsy, err := env.resolveRead(*a.Path)
	if err != nil {
		return Errorf("%v", err)
	}
	defer fsy.Close()
	fi, err := fsy.Stat(abs)
	if err != nil {
		return Errorf("read %s: %v", *a.Path, osErr(err))
	}
	if fi.IsDir() {
		return Errorf("%s is a directory; use ls to list it", *a.Path)
	}
	f, fi, err := fsy.OpenRegular(abs, os.O_RDONLY, 0)
	if err != nil {
		return Errorf("read %s: %v", *a.Path, osErr(err))
	}
	defer f.Close()

	head, binary, err := sniff(f)
	if err != nil {
		return Errorf("read %s: %v", *a.Path, err)
	}
	if mt := imageType(head); mt != "" {
		return readImage(f, fi.Size(), *a.Path, mt, head)
	}
	if bytes.HasPrefix(head, []byte("%PDF-")) {
		return Errorf("%s is a PDF (%d bytes): read shows text files and PNG, JPEG, GIF and WebP images, not PDFs; if pdftotext is installed, `pdftotext %q -` in bash prints its text", *a.Path, fi.Size(), *a.Path)
	}
	if binary {
		return Errorf("%s is a binary file", *a.Path)
	}
	if fi.Size() == 0 {
		return Result{Content: fmt.Sprintf("%s is empty", *a.Path)}
	}

	// A small file needs no 64 KiB buffer (reads of small files are the
	// common case, and children run many at once).
	bufSize := 64 << 10
	if fi.Size() < int64(bufSize) {
		bufSize = int(fi.Size()) + 1
	}
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(head), f), bufSize)
	var b strings.Builder
	n, shown := 0, 0
	for {
		if ctx.Err() != nil {
			return Errorf("read %s: canceled", *a.Path)
		}
		line, ok, err := readLine(br, readMaxLineLen)
		if err != nil {
			return Errorf("read %s: %v", *a.Path, err)
		}
		if !ok {
			break
		}
		n++
		if n < offset {
			continue
		}
		if shown == limit {
			fmt.Fprintf(&b, "[more lines follow; use offset=%d to continue]\n", n)
			break
		}
		fmt.Fprintf(&b, "%6d\t%s\n", n, line)
		shown++
	}
	if shown == 0 {
		return Errorf("offset %d is past the end of %s (%d lines)", offset, *a.Path, n)
	}
	return Result{Content: b.String()}
}

// readMaxImageBytes bounds an image read returns: base64 makes it the
// 5 MB Anthropic takes per image.
const readMaxImageBytes = 3_750_000

// imageType is the media type of an image format the models read, by the
// file's first bytes, or "".
func imageType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return "image/webp"
	}
	return ""
}

// readImage returns the image file f (size bytes, head already read from
// it) as an image for the model, with a line of text saying what it is.
func readImage(f io.Reader, size int64, name, mediaType string, head []byte) Result {
	if size > readMaxImageBytes {
		return Errorf("%s is a %s image of %d bytes; read passes images up to %d bytes (make a smaller copy with bash first)", name, mediaType, size, readMaxImageBytes)
	}
	data := make([]byte, 0, size)
	data = append(data, head...)
	data, err := wsfs.ReadAllInto(data, f, readMaxImageBytes)
	if err != nil {
		return Errorf("read %s: %v", name, err)
	}
	if len(data) > readMaxImageBytes {
		return Errorf("%s grew past %d bytes while it was read", name, readMaxImageBytes)
	}
	return Result{
		Content: fmt.Sprintf("%s: %s image, %d bytes", name, mediaType, len(data)),
		Image:   &llm.Image{MediaType: mediaType, Data: data},
	}
}

// readLine returns the next line of br without its newline, cut to max
// bytes; ok is false at the end of input. The rest of an over-long line is
// skipped without being held in memory.
func readLine(br *bufio.Reader, max int) (line string, ok bool, err error) {
	var buf []byte
	long := false
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 {
			ok = true
		}
		if !long {
			buf = append(buf, frag...)
			if len(buf) > max+1 {
				long = true
			}
		}
		switch {
		case err == nil:
			return finishLine(buf, max), true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return finishLine(buf, max), ok, nil
		default:
			return "", false, err
		}
	}
}

func finishLine(buf []byte, max int) string {
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	return search.TruncateLine(string(buf), max)
}
