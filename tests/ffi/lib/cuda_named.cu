// Device code that defines a function under a CUDA driver API's name.
extern "C" __device__ unsigned int cuCtxSynchronize() { return 0; }
