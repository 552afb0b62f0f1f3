"""The contact pass: particles against colliders (response, overlaps, clearance) and bodies against colliders."""
