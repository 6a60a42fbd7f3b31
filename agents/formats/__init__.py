"""The files agents travel in: the portable agent file and its export
(:mod:`.export`), the standard-library loaders a frontend copies
(:mod:`.kibitz_agent_loader`, :mod:`.kibitz_net_loader`) and the ONNX form
of the networks (:mod:`.onnx_model`)."""
