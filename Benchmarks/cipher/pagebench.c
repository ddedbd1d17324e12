// The page codec alone: seal and open one 16 KB page 20,000 times (BENCHMARKS.md, "Encryption at rest").
// clang -O2 -I Sources/CTroveCipher/include Benchmarks/cipher/pagebench.c Sources/CTroveCipher/page.c \
//     Sources/CTroveCipher/backend.c -lcrypto -o /tmp/pagebench && /tmp/pagebench
#include "CTroveCipher.h"
#include <stdio.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(void){
  static uint8_t page[16384], work[16384]; uint8_t key[32]={1}, id[16]={2};
  memset(page, 7, sizeof page); memset(page+16384-32,0,32);
  trove_cipher_seal_page(key,id,1,5,NULL,0,page,16384,0);
  int n=20000; double t0=now();
  for(int i=0;i<n;i++){ memcpy(work,page,16384); if(trove_cipher_open_page(key,id,1,5,NULL,0,work,16384,0)) return 1; }
  double t1=now();
  for(int i=0;i<n;i++){ memcpy(work,page,16384); }
  double t2=now();
  for(int i=0;i<n;i++){ trove_cipher_seal_page(key,id,1,5,NULL,0,work,16384,0); }
  double t3=now();
  printf("open %.2f us/page (memcpy %.2f), seal %.2f us/page; %.2f GB/s open\n",(t1-t0)/n*1e6,(t2-t1)/n*1e6,(t3-t2)/n*1e6, 16384.0*n/((t1-t0)-(t2-t1))/1e9);
}
