# Spot check of Trove's gloss vectors against sentence-transformers (run by build.sh in /tmp/union).
# Spot check: Trove's gloss vectors vs sentence-transformers on 200 seeded random glosses.
import numpy as np, random, os
os.environ['HF_HUB_OFFLINE']='1'
from sentence_transformers import SentenceTransformer
g=[l.rstrip('\n') for l in open('glosses.txt')]
wn=np.load('/tmp/trove-bench/emb/wn_gloss.npy')
rows=sorted(random.Random(7).sample(range(len(g)),200))
m=SentenceTransformer('/tmp/trove-bench/model/all-MiniLM-L6-v2',device='cpu')
ref=m.encode([g[i] for i in rows],batch_size=32,normalize_embeddings=True)
c=(ref*wn[rows]).sum(1); print('min cosine',c.min(),'mean',c.mean())
