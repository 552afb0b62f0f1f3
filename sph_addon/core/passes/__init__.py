"""World passes: what acts on every model's particles after the schemes (heat, phase, rigid bodies)."""
