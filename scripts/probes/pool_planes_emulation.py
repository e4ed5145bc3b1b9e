#!/usr/bin/env python3
"""Host emulation of the pooling family's sliding-planes kernel (src/evolve/pool_planes_generator.cpp):
the same tile walk, tap selection, accumulator ring and in-order completion, compared with direct
3-D pooling (PyTorch's semantics: max ignores padding, the average divides by the window clipped
to the padded extent) over five windows and four tilings. Needs numpy; prints one line per case.
    python3 scripts/probes/pool_planes_emulation.py
"""
import numpy as np, itertools
def naive(x,K,s,p,dl,mx):
    D,H,W=x.shape
    o=lambda n:(n+2*p-dl*(K-1)-1)//s+1
    Do,Ho,Wo=o(D),o(H),o(W)
    y=np.zeros((Do,Ho,Wo))
    def div(n,oo):
        st=oo*s-p; en=min(st+K,n+p); return en-st
    for a,b,c in itertools.product(range(Do),range(Ho),range(Wo)):
        vals=[]
        for kd,kh,kw in itertools.product(range(K),repeat=3):
            i,j,k=a*s-p+kd*dl,b*s-p+kh*dl,c*s-p+kw*dl
            if 0<=i<D and 0<=j<H and 0<=k<W: vals.append(x[i,j,k])
        y[a,b,c]=max(vals) if mx else sum(vals)/(div(D,a)*div(H,b)*div(W,c))
    return y
def planes(x,K,s,p,dl,mx,P,rows,cols):
    D,H,W=x.shape
    o=lambda n:(n+2*p-dl*(K-1)-1)//s+1
    Do,Ho,Wo=o(D),o(H),o(W)
    y=np.full((Do,Ho,Wo),np.nan)
    ident=-np.inf if mx else 0.0
    R=(K-1)*dl//s+1
    def div(n,oo):
        st=oo*s-p; en=min(st+K,n+p); return en-st
    for od0 in range(0,Do,P):
      for oh0 in range(0,Ho,rows):
        for ow0 in range(0,Wo,cols):
          od_end=min(od0+P,Do)
          last_depth=lambda od:min(od*s-p+(K-1)*dl,D-1)
          first=max(od0*s-p,0); last=last_depth(od_end-1)
          acc=np.full((R,rows,cols),ident)
          nxt=od0
          for i in range(first,last+1):
            # tile
            rin=(rows-1)*s+(K-1)*dl+1; cin=(cols-1)*s+(K-1)*dl+1
            t=np.full((rin,cin),ident)
            for r in range(rin):
              for c in range(cin):
                ih,iw=oh0*s-p+r,ow0*s-p+c
                if 0<=ih<H and 0<=iw<W: t[r,c]=x[i,ih,iw]
            pooled=np.full((rows,cols),ident)
            for tr in range(rows):
              for tc in range(cols):
                vals=[t[tr*s+kh*dl,tc*s+kw*dl] for kh in range(K) for kw in range(K)]
                pooled[tr,tc]=max(vals) if mx else sum(vals)
            for k in range(K):
              tt=i+p-k*dl
              if tt<0 or tt%s: continue
              od=tt//s
              if od<od0 or od>=od_end: continue
              sl=od%R
              acc[sl]=np.maximum(acc[sl],pooled) if mx else acc[sl]+pooled
            while nxt<od_end and last_depth(nxt)<=i:
              sl=nxt%R
              for tr in range(rows):
                for tc in range(cols):
                  oh,ow=oh0+tr,ow0+tc
                  if oh<Ho and ow<Wo:
                    y[nxt,oh,ow]=acc[sl,tr,tc] if mx else acc[sl,tr,tc]/(div(D,nxt)*div(H,oh)*div(W,ow))
              acc[sl]=ident; nxt+=1
    return y
rng=np.random.default_rng(0)
for (K,s,p,dl,mx) in [(3,2,1,1,False),(3,2,1,3,True),(2,2,0,1,True),(3,1,1,1,False),(4,3,2,2,True)]:
    x=rng.standard_normal((11,9,13))
    a=naive(x,K,s,p,dl,mx)
    for P,rows,cols in [(2,2,3),(4,3,4),(1,1,1),(8,8,8)]:
        b=planes(x,K,s,p,dl,mx,P,rows,cols)
        print(K,s,p,dl,mx,P,rows,cols, a.shape, np.allclose(a,b), np.isnan(b).sum())
