"""Inputs a user brings (files, folders, test data sets) and sample inputs."""
