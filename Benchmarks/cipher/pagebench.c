// The page codec alone: seal and open one 16 KB page 20,000 times (BENCHMARKS.md, "Encryption at
// rest"), once keying per page (the one-shot functions) and once with a keyed context (the VFS).
// Times are CPU time of this process, so other load on the machine doesn't inflate them.
// clang -O2 -I Sources/CTroveCipher/include Benchmarks/cipher/pagebench.c Sources/CTroveCipher/page.c \
//     Sources/CTroveCipher/backend.c Sources/CTroveCipher/gcm_vaes.c -lcrypto -o /tmp/pagebench && /tmp/pagebench
#include "CTroveCipher.h"
#include <stdio.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(void){
  static uint8_t page[16384], work[16384]; uint8_t key[32]={1}, id[16]={2};
  const int n=20000, size=16384;
  memset(page, 7, sizeof page); memset(page+size-32,0,32);
  trove_cipher_seal_page(key,id,1,5,NULL,0,page,size,0);
  double t0=now();
  for(int i=0;i<n;i++){ memcpy(work,page,size); if(trove_cipher_open_page(key,id,1,5,NULL,0,work,size,0)) return 1; }
  double t1=now();
  for(int i=0;i<n;i++){ memcpy(work,page,size); __asm__ volatile("" ::: "memory"); }
  double t2=now();
  for(int i=0;i<n;i++){ trove_cipher_seal_page(key,id,1,5,NULL,0,work,size,0); }
  double t3=now();
  printf("one-shot: open %.2f us/page (memcpy %.2f), seal %.2f us/page\n",(t1-t0)/n*1e6,(t2-t1)/n*1e6,(t3-t2)/n*1e6);
  trove_cipher_context *cipher = trove_cipher_context_new(key);
  if (!cipher) return 1;
  t0=now();
  for(int i=0;i<n;i++){ if(trove_cipher_open_page_into(cipher,id,1,5,NULL,0,page,work,size,0)) return 1; }
  t1=now();
  for(int i=0;i<n;i++){ trove_cipher_seal_page_into(cipher,id,1,5,NULL,0,work,page,size,0); memcpy(work,page,size); }
  t2=now();
  printf("keyed context: open %.2f us/page (%.2f GB/s), seal %.2f us/page\n",(t1-t0)/n*1e6, (double)size*n/(t1-t0)/1e9,(t2-t1)/n*1e6);
  trove_cipher_context_free(cipher);
}
