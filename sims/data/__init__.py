"""Image data sets (embedded digits and local files in their standard formats) and their
split across federated-learning clients."""

from pruneleak.sims.data.datasets import (
    ImageDataset,
    available_datasets,
    load_cifar10,
    load_dataset,
    load_digits_dataset,
    load_faces,
    load_fashion_mnist,
    load_femnist,
    load_mnist,
    load_patches,
    load_train_test,
    resize_images,
)
from pruneleak.sims.data.partition import (
    PARTITIONS,
    partition_by_client,
    partition_dirichlet,
    partition_iid,
    split_clients,
)

__all__ = [
    "PARTITIONS",
    "ImageDataset",
    "available_datasets",
    "load_cifar10",
    "load_dataset",
    "load_digits_dataset",
    "load_faces",
    "load_fashion_mnist",
    "load_femnist",
    "load_mnist",
    "load_patches",
    "load_train_test",
    "partition_by_client",
    "partition_dirichlet",
    "partition_iid",
    "resize_images",
    "split_clients",
]
