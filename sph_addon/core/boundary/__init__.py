"""The boundary: what the terms take from the colliders in a substep, sampled once (``walls.Walls``).

``walls``: the colliders placed at the end of the substep and the record of what they received;
``mirror`` (+ kernels): flat walls as mirrors of the liquid (method of images); ``lattice_fill``:
the fluid behind any other collider as the lattice continued into it; ``solid_share_kernels``: each
lattice point's share inside a solid; ``static_cells``: the static colliders on the pressure
projection's cells. The collisions themselves are the colliders' (``colliders.response``).
"""
