"""Observed state: readers for what the hardware's tools print (nvidia-smi, DCGM, amd-smi, ibstat,
nccl-tests, nvbandwidth), identity matching against the inventory, and the model they share.
"""
