// Command pngsplit cuts a tall PNG (a full-page screenshot) into pages of
// a given height, so each can be looked at whole: FILE.png becomes
// FILE-1.png, FILE-2.png, … It trims the blank bottom of the last page.
// It uses the standard library only; scripts/screenshot-report.sh runs it.
//
//	go run ./scripts/pngsplit FILE.png [HEIGHT]
package main

import (
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"os"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pngsplit FILE.png [HEIGHT]")
		os.Exit(2)
	}
	height := 1400
	if len(os.Args) > 2 {
		h, err := strconv.Atoi(os.Args[2])
		if err != nil || h < 100 {
			fmt.Fprintln(os.Stderr, "pngsplit: HEIGHT must be a number of pixels, at least 100")
			os.Exit(2)
		}
		height = h
	}
	if err := split(os.Args[1], height); err != nil {
		fmt.Fprintln(os.Stderr, "pngsplit:", err)
		os.Exit(1)
	}
}

func split(path string, height int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	b := img.Bounds()
	bottom := lastInkRow(img)
	base := strings.TrimSuffix(path, ".png")
	for i, top := 1, b.Min.Y; top < bottom; i, top = i+1, top+height {
		r := image.Rect(b.Min.X, top, b.Max.X, min(top+height, bottom+20, b.Max.Y))
		page := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
		draw.Draw(page, page.Bounds(), img, r.Min, draw.Src)
		out := fmt.Sprintf("%s-%d.png", base, i)
		w, err := os.Create(out)
		if err != nil {
			return err
		}
		if err := png.Encode(w, page); err != nil {
			w.Close()
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		fmt.Println(out)
	}
	return nil
}

// lastInkRow is the lowest row that is not plain white.
func lastInkRow(img image.Image) int {
	b := img.Bounds()
	for y := b.Max.Y - 1; y >= b.Min.Y; y-- {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				return y + 1
			}
		}
	}
	return b.Min.Y + 1
}
