#!/usr/bin/env python3
# Writes the seed corpus of the fuzz targets (fuzz/corpus/TARGET/*): a few valid
# and malformed inputs per target, encoded by hand after src/document.rs,
# src/signature.rs and src/codec.rs. The files are committed; rerun after a
# format change.
import os, struct
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus')
def w(target, name, data):
    d = os.path.join(root, target); os.makedirs(d, exist_ok=True)
    if isinstance(data, str): data = data.encode()
    open(os.path.join(d, name), 'wb').write(data)

def var(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80); v >>= 7
    out.append(v); return bytes(out)

def terms(ts):
    out = var(len(ts)); prev = b''
    for t, tf in ts:
        t = t.encode(); sh = 0
        while sh < min(len(prev), len(t)) and prev[sh] == t[sh]: sh += 1
        out += var(sh) + var(len(t) - sh) + t[sh:] + var(tf); prev = t
    return out

def segs(ss):
    out = var(len(ss))
    for h, idx in ss:
        out += struct.pack('<Q', h) + var(len(idx)) + b''.join(var(i) for i in idx)
    return out

def doc_v1(body_terms, title, numbers, sents, paras, images=0, links=0, words=0, fp=0, t=None, src=None):
    flags = (1 if t is not None else 0) | (2 if src is not None else 0)
    b = bytes([1, flags]) + var(images) + var(links) + var(words) + fp.to_bytes(16, 'little')
    if t is not None: b += struct.pack('<q', t)
    if src is not None: b += var(len(src.encode())) + src.encode()
    b += terms(body_terms) + terms(title)
    b += var(len(numbers)) + b''.join(var(len(n)) + n.encode() for n in numbers)
    return b + segs(sents) + segs(paras)

sample_terms = [('run', 1), ('книг', 2)]
w('document_decode', 'empty', doc_v1([], [], [], [], []))
full = doc_v1(sample_terms, [('книг', 1)], ['3.5', '1000000'], [(7, [0, 1, 1])], [(9, [1, 0])],
              images=2, links=3, words=5, fp=0x0123456789abcdef0011223344556677, t=784111777123456, src='tass')
w('document_decode', 'sample', full)
inf = doc_v1([('alpha', 1), ('beta', 1), ('gamma', 1)], [], [], [(1, [0, 1, 2])], [(2, [0, 1, 2])], words=3, t=2**63 - 1)
w('document_decode', 'infinity', inf)
long_terms = [('a' * 127 + chr(0x21 + i), 1) for i in range(20)]
w('document_decode', 'long_terms', doc_v1(long_terms, [], ['0', '-12.5'], [], []))
# the growing-prefix bomb, cut short (its entry 128 is one byte too long)
bomb = bytes([1, 0, 0, 0, 0]) + bytes(16) + var(200)
for i in range(200): bomb += var(i) + var(1) + b'a' + var(1)
bomb += bytes(4)
w('document_decode', 'bomb', bomb)
for n in ('empty', 'sample', 'infinity', 'long_terms', 'bomb'):
    w('document_skim', n, open(os.path.join(root, 'document_decode', n), 'rb').read())

def sig(tag, keys): return bytes([1, tag]) + b''.join(struct.pack('<I', k) for k in keys)
w('signature_decode', 'imatch', sig(1, [1, 258, 70000, 2**32 - 1]))
w('signature_decode', 'topwords', sig(2, list(range(1, 13))))
w('signature_decode', 'longest_empty', sig(3, []))

def f64s(xs): return var(len(xs)) + b''.join(struct.pack('<d', x) for x in xs)
def model(kernel, features, mean, std, bias, weights, svs, coefs):
    p = var(len(features)) + b''.join(var(f) for f in features)
    p += f64s(mean) + f64s(std)
    p += var(0) if kernel is None else var(1) + struct.pack('<d', kernel)
    p += struct.pack('<d', bias) + f64s(weights)
    p += var(len(svs)) + b''.join(f64s(sv) for sv in svs) + f64s(coefs)
    return b'PGDM' + struct.pack('<H', 1) + p
# bincode varint: values < 251 are one byte
w('model_decode', 'linear', model(None, [0, 2, 5], [0.5, 0.1, 0.3], [0.2, 1.0, 0.7], -0.25, [1.5, -0.5, 2.0], [], []))
w('model_decode', 'rbf', model(0.7, [1, 3], [0.0, 0.5], [1.0, 0.25], 0.1, [], [[0.1, 0.2], [-1.0, 0.5], [0.3, 0.3]], [1.0, -0.5, 0.25]))

txt = {
 'empty': '{"v":1}',
 'sample': '{"fingerprint":"0123456789abcdef0011223344556677","images":2,"links":3,"numbers":["3.5","1000000"],"paragraphs":[{"h":"0000000000000009","t":["книг","run"]}],"published_at":"2024-11-05T09:29:37.123456Z","sentences":[{"h":"0000000000000007","t":["run","книг","книг"]}],"source":"tass","terms":{"run":1,"книг":2},"title":{"книг":1},"v":1,"words":5}',
 'infinity': '{"v":1,"published_at":"infinity","terms":{"alpha":1,"beta":1,"gamma":1}}',
 'far_years': '{"v":1,"published_at":"-4713-11-24T00:00:00Z","source":"","numbers":[12,3.50,"-0.25"]}',
 'escapes': r'{"v":1,"terms":{"\u0000":1,"a\"b":2,"\\":3},"paragraphs":[{"h":"ffffffffffffffff","t":["\\","a\"b","\u0000"]}]}',
 'escapes_bad_segment': r'{"v":1,"terms":{"\u0000":1,"a\"b":2,"\\":3},"sentences":[{"h":"+f","t":["\\","a\"b",[]]}],"paragraphs":[{"h":"ffffffffffffffff","t":["\\","a\"b"]}]}',
}
for k, v in txt.items(): w('document_text', k, v)

an = {
 'news_ru': 'Минфин России разместил ОФЗ на 3,5 млрд рублей. Спрос превысил 1 000 000 заявок.\n\nВторой абзац: ещё раз о Минфине.',
 'news_en': '<p>The <b>bank</b> said 1,000 runs were running.</p><p>Second <a href="x">link</a> paragraph.</p>',
 'markdown': '**Срочно**: [ссылка](https://t.me/x) и #хэштег\n\n> цитата `код`',
 'long_word': 'short ' + 'x' * 300 + ' ' + 'я' * 70 + ' end.',
 'mixed': 'Mixed 東京 λόγος Москва mоscow ١٢٣ 🙂 soft\u00adhyphen zero\u200bwidth',
}
for i, (k, v) in enumerate(an.items()):
    w('text_analyze', k, bytes([i * 0x21 & 0xff]) + v.encode())
