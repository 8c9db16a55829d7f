#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <immintrin.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define C2 (float)(1.0/12.0)
#define C1 (float)(4.0/3.0)
static inline float f(const float*r,size_t i,size_t nx){return -C2*r[i-2*nx]+C1*r[i-nx]-2.5f*r[i]+C1*r[i+nx]-C2*r[i+2*nx];}
__attribute__((noinline)) static void run(float*restrict o,const float*restrict p,size_t nz,size_t nx,long dist,int hint,int pfw,int nt){
 for(size_t iz=2;iz<nz-2;iz++){const float*r=p+iz*nx;float*out=o+iz*nx;
  size_t i=2;
  if(nt){ while(i<nx-2 && ((size_t)(out+i)&31)){out[i]=f(r,i,nx);i++;} }
  for(;i+16<=nx-2;i+=16){
   if(dist){const char*a=(const char*)(r+2*nx+i+dist);
    switch(hint){case 0:_mm_prefetch(a,_MM_HINT_T0);break;case 1:_mm_prefetch(a,_MM_HINT_T1);break;case 2:_mm_prefetch(a,_MM_HINT_T2);break;case 3:_mm_prefetch(a,_MM_HINT_NTA);break;}}
   if(pfw) _m_prefetchw((void*)(out+i+pfw));
   if(nt){ float t[16]; for(int k=0;k<16;k++)t[k]=f(r,i+k,nx);
     _mm256_stream_ps(out+i,_mm256_loadu_ps(t));_mm256_stream_ps(out+i+8,_mm256_loadu_ps(t+8));}
   else for(int k=0;k<16;k++)out[i+k]=f(r,i+k,nx);}
  for(;i<nx-2;i++)out[i]=f(r,i,nx);}
 if(nt)_mm_sfence();}
int main(int argc,char**argv){size_t nz=atoi(argv[1]),nx=atoi(argv[2]);
 size_t n=nz*nx;float*p=aligned_alloc(4096,n*4),*o=aligned_alloc(4096,n*4);
 for(size_t i=0;i<n;i++){p[i]=0.5f+0.4f*(i%977)/977.f;o[i]=0;}
 long cfg[][4]={{0,0,0,0},{256,0,0,0},{512,0,0,0},{1024,0,0,0},{2048,0,0,0},{4096,0,0,0},{8192,0,0,0},{1024,1,0,0},{1024,2,0,0},{1024,3,0,0},{0,0,0,1},{1024,0,0,1},{2048,0,0,1},{1024,0,512,0}};
 for(int k=0;k<14;k++){double best=1e9;for(int r=0;r<7;r++){double t=now();run(o,p,nz,nx,cfg[k][0],cfg[k][1],cfg[k][2],cfg[k][3]);t=now()-t;if(t<best)best=t;}
  printf("dist %5ld floats hint %ld pfw %3ld nt %ld: %.2f Gpt/s\n",cfg[k][0],cfg[k][1],cfg[k][2],cfg[k][3],(nz-4)*(nx-4)/best/1e9);}}
