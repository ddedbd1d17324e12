# Builds the 172,067-vector "union" set: the shared package-description vectors + Trove's own
# embeddings of the 114,038 WordNet glosses (trove embed), in the files peers/vector.py reads.
import numpy as np, os, sys
vec_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../shared/bench/vectors'); emb = '/tmp/trove-bench/emb'
os.makedirs(emb, exist_ok=True)
body = np.load(f'{vec_dir}/base.f16.npy').astype(np.float32)
queries = np.load(f'{vec_dir}/queries.f16.npy').astype(np.float32)
wn = np.loadtxt(sys.argv[1], dtype=np.float32)
assert wn.shape == (114038, 384), wn.shape
print('gloss norms', np.linalg.norm(wn, axis=1).min(), np.linalg.norm(wn, axis=1).max())
np.save(f'{emb}/pkg_body.npy', body); np.save(f'{emb}/pkg_synopsis.npy', queries); np.save(f'{emb}/wn_gloss.npy', wn)
np.save('/tmp/union/union_base.f32.npy', np.concatenate([body, wn]))
print('union', body.shape[0] + wn.shape[0])
