#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <immintrin.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define K(NAME,EXPR) static void NAME(float*restrict o,const float*restrict p,size_t nz,size_t nx){ \
 for(size_t iz=2;iz<nz-2;iz++){const float*r=p+iz*nx;float*out=o+iz*nx; \
  for(size_t i=2;i<nx-2;i++) out[i]=EXPR;}}
K(r1, 2.5f*r[i+2*nx])
K(r2, 2.5f*r[i+2*nx]+r[i+nx])
K(r3, 2.5f*r[i+2*nx]+r[i+nx]+r[i])
K(r4, 2.5f*r[i+2*nx]+r[i+nx]+r[i]+r[i-nx])
K(r5, 2.5f*r[i+2*nx]+r[i+nx]+r[i]+r[i-nx]+r[i-2*nx])
K(r2far, 2.5f*r[i+2*nx]+r[i-2*nx])
K(s5, 2.5f*r[i+2*nx]+r[i+2*nx+1]+r[i+2*nx-1]+r[i+2*nx+2]+r[i+2*nx-2])
typedef void(*F)(float*restrict,const float*restrict,size_t,size_t);
int main(int argc,char**argv){size_t nz=atoi(argv[1]),nx=atoi(argv[2]);
 size_t n=nz*nx;float*p=aligned_alloc(4096,n*4),*o=aligned_alloc(4096,n*4);
 for(size_t i=0;i<n;i++){p[i]=0.5f+0.4f*(i%977)/977.f;o[i]=0;}
 F fs[]={r1,r2,r3,r4,r5,r2far,s5}; const char*nm[]={"1 row (+2)","2 rows (+2,+1)","3 rows","4 rows","5 rows","2 rows (+2,-2)","1 row 5 taps"};
 for(int k=0;k<7;k++){double best=1e9;for(int r=0;r<7;r++){double t=now();fs[k](o,p,nz,nx);t=now()-t;if(t<best)best=t;}
  printf("%-16s %.2f Gpt/s\n",nm[k],(nz-4)*(nx-4)/best/1e9);}}
