"""The pieces behind ``minitorch_nn.save`` / ``minitorch_nn.load`` (see ``serialization.py``).

A PyTorch checkpoint (``torch.save`` since 1.6) is an uncompressed zip archive::

    archive/data.pkl                 the object, pickled; each storage is a *persistent id*
    archive/.format_version          "1"
    archive/.storage_alignment       "64" (storage bytes start at multiples of 64 in the file)
    archive/byteorder                "little"
    archive/data/0, data/1, ...      raw bytes of each storage, one record per storage
    archive/version                  "3"
    archive/.data/serialization_id   a random 40-digit id

Read in this order:

* ``zip_writer.py``  writes that archive the way PyTorch's C++ writer does;
* ``zip_reader.py``  reads it back, checking every length, offset and checksum first;
* ``pickler.py``     turns tensors, state dicts and plain values into ``data.pkl`` (other
  objects, a whole model say, by class reference, as ``torch.save`` does);
* ``unpickler.py``   the restricted reader of ``data.pkl``: it knows a fixed list of names
  (the tensor rebuild functions, storage and dtype names, ``collections.OrderedDict``...),
  maps each to *our own* function, and refuses everything else. Nothing a file names is
  ever imported or called;
* ``full_unpickler.py``  the reader behind ``load(f, weights_only=False)``: Python's own
  unpickling (it imports and runs what the file names, as PyTorch's does), with the tensor
  names mapped as above; for whole pickled models from files you trust;
* ``legacy.py``      PyTorch's pre-1.6 format (pickles one after another, then raw bytes),
  read with the same unpickler.
"""
