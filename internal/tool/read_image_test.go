package tool

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadImage: read of a PNG, JPEG, GIF or WebP file (known by its first
// bytes, whatever its name) returns the exact bytes as an image with a
// line of text; an image over the cap and a PDF are clear errors; a file
// that only looks like a text file is read as text.
func TestReadImage(t *testing.T) {
	env := newEnv(t, ReadOnly)
	files := map[string][]byte{
		"a.png":         append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 0, 1, 2),
		"b.jpg":         []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"),
		"c.gif":         []byte("GIF89a\x01\x00\x01\x00\x00"),
		"d.webp":        []byte("RIFF\x1a\x00\x00\x00WEBPVP8 \x00"),
		"png-named.txt": append([]byte("\x89PNG\r\n\x1a\n"), 0),
	}
	want := map[string]string{"a.png": "image/png", "b.jpg": "image/jpeg", "c.gif": "image/gif", "d.webp": "image/webp", "png-named.txt": "image/png"}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(env.Workspace, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		r := call(t, env, "read", map[string]any{"path": name})
		if r.IsError || r.Image == nil {
			t.Errorf("read %s: %+v", name, r)
			continue
		}
		if r.Image.MediaType != want[name] || !bytes.Equal(r.Image.Data, data) {
			t.Errorf("read %s: image %s of %d bytes, want %s of %d", name, r.Image.MediaType, len(r.Image.Data), want[name], len(data))
		}
		if !strings.Contains(r.Content, want[name]+" image") {
			t.Errorf("read %s: text %q", name, r.Content)
		}
	}

	big := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, readMaxImageBytes)...)
	os.WriteFile(filepath.Join(env.Workspace, "big.png"), big, 0o644)
	r := call(t, env, "read", map[string]any{"path": "big.png"})
	if !r.IsError || r.Image != nil || !strings.Contains(r.Content, "read passes images up to") {
		t.Errorf("read big.png: error=%v image=%v %q", r.IsError, r.Image != nil, r.Content)
	}

	os.WriteFile(filepath.Join(env.Workspace, "doc.pdf"), []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"), 0o644)
	r = call(t, env, "read", map[string]any{"path": "doc.pdf"})
	if !r.IsError || !strings.Contains(r.Content, "is a PDF") || !strings.Contains(r.Content, "pdftotext") {
		t.Errorf("read doc.pdf: error=%v %q", r.IsError, r.Content)
	}

	os.WriteFile(filepath.Join(env.Workspace, "x.png"), []byte("not really a png\n"), 0o644)
	r = call(t, env, "read", map[string]any{"path": "x.png"})
	if r.IsError || r.Image != nil || !strings.Contains(r.Content, "not really a png") {
		t.Errorf("read x.png (text): %+v", r)
	}
}
