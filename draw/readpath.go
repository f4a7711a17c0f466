package draw

import (
	"bytes"
	"fmt"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
)

// readPathRun is what one read through fscrypt's read path counted under
// one crypto-bio variant, summed over the reader and the path's own
// tasks (the loop device and the fscrypt_read_queue workers).
type readPathRun struct {
	variant string
	pages   int
	ev      map[string]uint64
}

// runReadPath reads pages 4 KiB pages of an AES-256-XTS file (one bio)
// through fscrypt.ReadPath under variant and checks the plaintext.
func runReadPath(variant string, pages int) (*readPathRun, error) {
	set, err := patch.Parse("crypto-bio=" + variant)
	if err != nil {
		return nil, err
	}
	k := kernel.NewWith(kernel.Config{Patches: set, Counting: true})
	t := k.NewTask("reader")
	defer t.Exit()
	sb := bare.NewSB(crypto.NewAPI())
	id, _, err := bare.AddKey(t, sb, 2, bare.PlaintextStream("vfslab draw master key", 64))
	if err != nil {
		return nil, err
	}
	pol := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS, FilenamesMode: fscrypt.ModeAES256CTS,
		Flags: fscrypt.PolicyFlagsPad32, Identifier: id}
	nonce := bare.PlaintextStream("vfslab draw nonce", fscrypt.FileNonceSize)
	file, err := sb.NewEncryptedInode(t, pol, nonce, 12, fscrypt.SIFREG|0o644, 12)
	if err != nil {
		return nil, err
	}
	disk := make([]byte, pages*block.PageSize)
	plain := bare.PlaintextStream("vfslab draw contents", len(disk))
	folio := block.NewFolio(0, 0)
	folio.Host = fscrypt.Inode(file)
	for i := 0; i < pages; i++ {
		folio.Index = uint64(i)
		copy(folio.Data, plain[i*block.PageSize:])
		bounce, err := fscrypt.EncryptPagecacheBlocks(t, folio, block.PageSize, 0)
		if err != nil {
			return nil, err
		}
		copy(disk[i*block.PageSize:], bounce)
		fscrypt.FreeBouncePage(t, bounce)
	}
	before := t.Ev.Clone()
	rp, err := fscrypt.NewReadPath(k, file, 0, disk, fscrypt.ReadPathOptions{Count: true, WorkqueueMaxActive: 1, DeviceWorkers: 1})
	if err != nil {
		return nil, err
	}
	dst := make([]byte, len(disk))
	err = rp.Read(t, dst, 0)
	rp.Close()
	if err != nil {
		return nil, err
	}
	// As posted, bio decrypts only the first data unit of each bio right
	// (the x86 XTS glue increments the tweak, not the IV: see
	// fscrypt.DecryptBio); the others must give the plaintext.
	if !bytes.Equal(dst, plain) && (variant != "bio" || !bytes.Equal(dst[:block.PageSize], plain[:block.PageSize])) {
		return nil, fmt.Errorf("crypto-bio=%s: the read decrypted wrong", variant)
	}
	total := t.Ev.Sub(before)
	for _, w := range rp.Tasks() {
		total.Merge(w.Ev)
	}
	return &readPathRun{variant: variant, pages: pages, ev: total.Map()}, nil
}

// pipelineStage is one box of a read pipeline.
type pipelineStage struct {
	title, detail, ctx string
}

// stagesOf is the read path's structure under a variant (fs/crypto/bio.c
// fscrypt_decrypt_bio and its callers, fscrypt/readpath.go), labelled with
// what the run counted.
func stagesOf(r *readPathRun) []pipelineStage {
	ev := r.ev
	du := ev["fscrypt_data_unit_crypt"]
	st := []pipelineStage{
		{"submit_bio", fmt.Sprintf("%d pages, one bio", r.pages), "reader task"},
		{"loop0: read sectors, bio_endio", "ext4 mpage_end_io / f2fs_read_end_io", "block device (loop0)"},
	}
	switch r.variant {
	case "workqueue":
		st = append(st, pipelineStage{"fscrypt_enqueue_decrypt_work", fmt.Sprintf("queue_work: %d work item(s) (fscrypt_decrypt_work)", ev["fscrypt_decrypt_work"]), "completion"},
			pipelineStage{"fscrypt_read_queue worker", "unbound workqueue, max_active = CPUs", "kworker/u*:fscrypt_read_queue"})
	default:
		st = append(st, pipelineStage{"(no workqueue)", "decrypts in the completion context", "completion"})
	}
	ctx := "kworker"
	if r.variant != "workqueue" {
		ctx = "completion"
	}
	st = append(st, pipelineStage{"fscrypt_decrypt_bio", fmt.Sprintf("%d bio(s), %d data units", ev["fscrypt_decrypt_bio"], du), ctx})
	switch r.variant {
	case "workqueue", "inline":
		st = append(st, pipelineStage{"fscrypt_decrypt_pagecache_blocks", fmt.Sprintf("one request per data unit: skcipher_request_alloc=%d on_stack=%d", ev["skcipher_request_alloc"], ev["skcipher_request_on_stack"]), ctx})
	case "chain":
		st = append(st, pipelineStage{"chained requests", fmt.Sprintf("%d heap requests chained behind the first (skcipher_chain_request=%d)", ev["skcipher_request_alloc"], ev["skcipher_chain_request"]), ctx})
	case "bio":
		st = append(st, pipelineStage{"one whole-bio request", fmt.Sprintf("CRYPTO_SKCIPHER_REQ_BIO on the stack: skcipher_bio_request=%d, %d data units, le64 IV increment", ev["skcipher_bio_request"], ev["skcipher_bio_data_units"]), ctx})
	}
	st = append(st,
		pipelineStage{"crypto_skcipher_decrypt → xts(aes)", fmt.Sprintf("skcipher_decrypt=%d, %d bytes", ev["skcipher_decrypt"], ev["skcipher_bytes"]), ctx},
		pipelineStage{"folio_end_read", "folios uptodate, reader woken", ctx})
	return st
}

// drawReadPaths draws one column per variant run.
func drawReadPaths(runs []*readPathRun, title string, notes []string) string {
	c := &canvas{}
	c.text(20, 28, "start", 18, "bold", colInk, title)
	for i, n := range notes {
		c.text(20, 48+i*16, "start", 12, "normal", colMuted, n)
	}
	top := 70 + 16*len(notes)
	const colW, boxW, boxH, rowH = 330, 310, 70, 94
	for i, r := range runs {
		x := 20 + i*colW
		c.text(x+boxW/2, top, "middle", 15, "bold", colInk, "crypto-bio="+r.variant)
		for j, s := range stagesOf(r) {
			y := top + 14 + j*rowH
			fill := colStage
			if s.title == "(no workqueue)" {
				fill = colUnused
			}
			c.box("stage", x, y, boxW, boxH, fill, colInk, s.title == "(no workqueue)")
			c.text(x+boxW/2, y+18, "middle", 12, "bold", colInk, s.title)
			for k, l := range wrap(s.detail, 58) {
				if k < 2 {
					c.text(x+boxW/2, y+33+k*13, "middle", 9, "normal", colInk, l)
				}
			}
			c.text(x+boxW/2, y+62, "middle", 9, "normal", colMuted, "context: "+s.ctx)
			if j > 0 {
				c.arrow("flow", x+boxW/2, y-rowH+boxH, x+boxW/2, y, "#555555", false)
			}
		}
	}
	return c.String(title)
}
